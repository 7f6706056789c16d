/* Writing a trace file: whole records appended with write(2), so that a reader sees a prefix of
 * whole records even when ptt trace itself is killed mid-way (at worst a truncated last one). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "writer.h"

static int write_all(struct ptt_writer *w, struct iovec *iov, int n)
{
    if (w->error)
        return -1;
    while (n > 0) {
        ssize_t k = writev(w->fd, iov, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            w->error = errno;
            return -1;
        }
        w->offset += (uint64_t)k;
        while (n > 0 && (size_t)k >= iov->iov_len) {
            k -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + k;
            iov->iov_len -= (size_t)k;
        }
    }
    return 0;
}

int ptt_writer_open(struct ptt_writer *w, const char *path)
{
    memset(w, 0, sizeof *w);
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (w->fd < 0)
        return -1;
    struct ptt_file_header h;
    memcpy(h.magic, PTT_FILE_MAGIC, 8);
    h.major = PTT_FORMAT_MAJOR;
    h.minor = PTT_FORMAT_MINOR;
    h.header_size = sizeof h;
    struct iovec iov = {&h, sizeof h};
    return write_all(w, &iov, 1);
}

int ptt_writer_record(struct ptt_writer *w, uint32_t type, const void *head, size_t head_len,
                      const void *payload, size_t payload_len)
{
    static const char zeros[8];
    size_t len = head_len + payload_len;
    size_t pad = (8 - len % 8) % 8;
    struct ptt_record *r = (struct ptt_record *)head;
    r->type = type;
    r->size = (uint32_t)(len + pad);
    struct iovec iov[3] = {
        {(void *)head, head_len}, {(void *)payload, payload_len}, {(void *)zeros, pad}};
    return write_all(w, iov, 3);
}

int ptt_writer_records(struct ptt_writer *w, const struct ptt_writer_rec *r, unsigned n)
{
    struct iovec iov[128];
    int k = 0;
    for (unsigned i = 0; i < n; i++) {
        struct ptt_record *h = r[i].head;
        h->type = r[i].type;
        h->size = (uint32_t)(r[i].head_len + r[i].payload_len);
        iov[k++] = (struct iovec){r[i].head, r[i].head_len};
        if (r[i].payload_len)
            iov[k++] = (struct iovec){(void *)r[i].payload, r[i].payload_len};
        if (k + 2 > (int)(sizeof iov / sizeof iov[0]) || i + 1 == n) {
            if (write_all(w, iov, k))
                return -1;
            k = 0;
        }
    }
    return 0;
}

int ptt_writer_info(struct ptt_writer *w, const char *text)
{
    struct ptt_record h;
    return ptt_writer_record(w, PTT_REC_INFO, &h, sizeof h, text, strlen(text));
}

int ptt_writer_clock(struct ptt_writer *w, uint64_t ticks, uint64_t mono_ns, uint64_t real_ns)
{
    struct ptt_rec_clock c = {{0, 0}, ticks, mono_ns, real_ns};
    return ptt_writer_record(w, PTT_REC_CLOCK, &c, sizeof c, 0, 0);
}

int ptt_writer_close(struct ptt_writer *w)
{
    int r = w->error ? -1 : 0;
    if (close(w->fd) && !r) {
        w->error = errno;
        r = -1;
    }
    if (r && w->error)
        errno = w->error;
    return r;
}
