/* The readers' view of the compact encoding and of the records that stand for more than one
 * event (see decode.h). */
#include <stddef.h>
#include <string.h>

#include "trace/decode.h"

int ptt_decode_call(struct ptt_ev *ev, struct ptt_ev *out)
{
    if (!(ev->id & PTT_EV_CALL) || ev->info)
        return 0;
    const struct ptt_evinfo *in = ptt_evinfo((uint16_t)(ev->id & ~PTT_EV_CALL));
    const struct ptt_evinfo *o = in && in->call_out ? ptt_evinfo(in->call_out) : NULL;
    if (!o || ev->nargs != 1 + in->nargs + o->nargs)
        return 0;
    memcpy(out, ev, offsetof(struct ptt_ev, args));
    out->id = o->id;
    out->info = o;
    out->nargs = o->nargs;
    out->ticks = ev->ticks + ev->args[0];
    memcpy(out->args, ev->args + 1 + in->nargs, o->nargs * sizeof ev->args[0]);
    ev->id = in->id;
    ev->info = in;
    ev->nargs = in->nargs;
    memmove(ev->args, ev->args + 1, in->nargs * sizeof ev->args[0]);
    return 1;
}

void ptt_dec_start(struct ptt_dec *d, uint64_t base_ts)
{
    d->base = base_ts;
    memset(d->dict, 0, sizeof d->dict);
}
