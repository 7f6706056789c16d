"""A session belongs to its user (docs/security.md). libptt attaches only the pool of its session:
a shared-memory object that another user created under the name (once free), one open to
others, one reached through a symbolic link, one without the session's secret or with a header
whose offsets and sizes do not hold, is left untouched: the program runs untraced, its output
and exit status unchanged, and libptt says why in one line on stderr. Names another user took in
advance do not keep a user's ptt trace from running. Tests with two users need root (setpriv to
uids without a passwd entry)."""

import os
import re
import secrets
import shutil
import stat
import struct
import subprocess
import tempfile

import pytest

from conftest import BUILD, PTT, SOURCE, TIMEOUT, prog, require_build

POOL_H = (SOURCE / "common" / "pool.h").read_text()
VERSION = int(re.search(r"#define PTT_POOL_VERSION (\d+)", POOL_H)[1])
HAS_SECRET = "PTT_POOL_SECRET" in POOL_H  # PTT_SHM is "/NAME:SECRET" (else "/NAME")
MAGIC = 0x31304C4F4F505454
EMPTY = 0xFFFFFFFF
LIB = BUILD / "lib" / "libptt.so"
VICTIM, ATTACKER = 12001, 12002
NOT_TRACING = "ptt: libptt: not tracing: "


def pool_bytes(secret, nbufs=2, buf_size=4096, desc=4096, data=8192, total=None, size=None,
               clock=2, overflow=1, depth=0, pid=1, free_head=0, socket=b""):
    """A pool as ptt trace lays it out (common/pool.h), every sub-buffer free, everything
    recorded, --overflow=discard (nobody drains it); the arguments make it wrong."""
    total = data + nbufs * buf_size if total is None else total
    b = bytearray(total if size is None else size)
    struct.pack_into("<QIIIIIiQQQI", b, 0, MAGIC, VERSION, nbufs, buf_size, clock, overflow, pid,
                     desc, data, total, depth)
    b[64:172] = socket.ljust(108, b"\0")
    if HAS_SECRET:
        b[172:188] = secret
    struct.pack_into("<QQ", b, 256, 2**64 - 1, 2**64 - 1)
    struct.pack_into("<Q", b, 320, free_head)
    for i in range(nbufs):
        if desc + 64 * i + 12 <= len(b):
            struct.pack_into("<I", b, desc + 64 * i + 8, i + 1 if i + 1 < nbufs else EMPTY)
    return bytes(b)


class Pool:
    """A shared-memory object of the test's, /dev/shm/NAME, and the PTT_SHM that names it."""

    def __init__(self, content=None, mode=0o600, secret=None):
        self.name = f"ptt-test-{os.getpid()}-{secrets.token_hex(6)}"
        self.path = f"/dev/shm/{self.name}"
        self.secret = secret or secrets.token_bytes(16)
        if content is not None:
            self.write(content, mode)

    def write(self, content, mode=0o600):
        fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_NOFOLLOW, 0o600)
        os.write(fd, content)
        os.fchmod(fd, mode)
        os.close(fd)
        self.content = content

    def env(self, secret=None):
        s = (secret or self.secret).hex()
        return f"/{self.name}:{s}" if HAS_SECRET else f"/{self.name}"

    def read(self):
        with open(self.path, "rb") as f:
            return f.read()

    def remove(self):
        if os.path.lexists(self.path):
            os.unlink(self.path)


@pytest.fixture
def pools():
    made = []
    yield lambda *a, **k: made.append(Pool(*a, **k)) or made[-1]
    for p in made:
        p.remove()


def as_uid(uid, cmd):
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--",
            *[str(c) for c in cmd]]


def base_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("PTT_") and k not in ("LD_PRELOAD", "XDG_RUNTIME_DIR")}
    env["PATH"] = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"
    return env


def victim(shm, uid=None):
    """flood 2 1000 with libptt preloaded and PTT_SHM=shm (as uid): its CompletedProcess."""
    require_build()
    cmd = ["env", f"LD_PRELOAD={LIB}", f"PTT_SHM={shm}", prog("flood"), 2, 1000]
    return subprocess.run([str(c) for c in (as_uid(uid, cmd) if uid else cmd)],
                          capture_output=True, text=True, timeout=TIMEOUT, env=base_env())


def check_untraced(r, why):
    """The program ran as without libptt, and libptt said why it did not trace, in one line."""
    assert (r.returncode, r.stdout) == (0, "done=2000\n"), r
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(NOT_TRACING) and why in lines[0], r.stderr


def need_root():
    if os.geteuid() != 0:
        pytest.skip("needs root: it runs processes as two other users (setpriv)")


def test_own_pool_attached_only_with_its_secret(pools):
    """The pool of the session (ours, 0600, the secret of PTT_SHM) is written to; the same pool
    named with another secret is not."""
    p = pools()
    p.write(pool_bytes(p.secret))
    r = victim(p.env())
    assert (r.returncode, r.stdout, r.stderr) == (0, "done=2000\n", "")
    assert p.read() != p.content, "the events were not recorded in the session's pool"
    p.remove()
    p.write(pool_bytes(p.secret))
    check_untraced(victim(p.env(secrets.token_bytes(16))), f"pool /{p.name}: not this session's")
    assert p.read() == p.content


@pytest.mark.parametrize("shm", ["/NAME", "/NAME:", "/NAME:SECRET0", "NAME:SECRET",
                                 "/NAME:SECRET:SECRET"])
def test_env_without_secret(pools, shm):
    """PTT_SHM naming a pool that would do, without the secret (as before there was one), or
    malformed: not attached."""
    p = pools()
    p.write(pool_bytes(p.secret))
    shm = shm.replace("NAME", p.name).replace("SECRET", p.secret.hex())
    check_untraced(victim(shm), "PTT_SHM is malformed")
    assert p.read() == p.content


def test_pool_open_to_others(pools):
    p = pools()
    p.write(pool_bytes(p.secret), mode=0o644)
    check_untraced(victim(p.env()), f"pool /{p.name} is open to other users (mode 0644)")
    assert p.read() == p.content


def test_pool_through_symlink(pools):
    """A symbolic link in /dev/shm to a pool that would do: not followed."""
    target = pools()
    target.write(pool_bytes(target.secret))
    link = pools()
    os.symlink(target.path, link.path)
    check_untraced(victim(link.env(target.secret)), "symbolic link")
    assert target.read() == target.content


BAD = {
    "one sub-buffer": dict(nbufs=1),
    "sub-buffer size": dict(buf_size=1000, data=8192, total=8192 + 2000, size=8192 + 2000),
    "descriptors past the end": dict(desc=1 << 20),
    "descriptors in the header": dict(desc=64),
    "data unaligned": dict(data=8192 + 8, size=8192 + 8 + 8192),
    "data over descriptors": dict(nbufs=100, data=8192),
    "total beyond the object": dict(total=1 << 30, size=16384),
    "object beyond total": dict(size=8192 + 3 * 4096),
    "socket path unterminated": dict(socket=b"x" * 108),
    "clock": dict(clock=7),
    "overflow": dict(overflow=9),
    "backtrace depth": dict(depth=100000),
}


@pytest.mark.parametrize("what", BAD)
def test_pool_bad_header(pools, what):
    """Ours, closed to others, with the secret, but with a header whose offsets or sizes libptt
    would use do not hold: not written to, and no crash."""
    p = pools()
    p.write(pool_bytes(p.secret, **BAD[what]))
    check_untraced(victim(p.env()), f"pool /{p.name}: bad ")
    assert p.read() == p.content


def test_free_list_index_out_of_range(pools):
    """A well-formed pool whose free list holds an index past its sub-buffers: no sub-buffer is
    taken there (with --overflow=discard the events are dropped), and the program runs on."""
    p = pools()
    p.write(pool_bytes(p.secret, overflow=1, free_head=0x7FFFFFFF))
    r = victim(p.env())
    assert (r.returncode, r.stdout, r.stderr) == (0, "done=2000\n", "")
    assert p.read()[4096:] == p.content[4096:], "something was written into a sub-buffer"


@pytest.mark.parametrize("offsets", ["valid", "bad"])
def test_pool_of_another_user(pools, offsets):
    """Another user created the name, world-writable, with a header that would do (or with
    crafted offsets): the victim writes nothing there, and the attacker reads back what it
    wrote."""
    need_root()
    p = pools()
    kw = {} if offsets == "valid" else dict(desc=1 << 40, data=1 << 41, size=16384)
    p.write(pool_bytes(p.secret, **kw), mode=0o666)
    os.chown(p.path, ATTACKER, ATTACKER)
    check_untraced(victim(p.env(), uid=VICTIM),
                   f"pool /{p.name} is owned by uid {ATTACKER}, not {VICTIM}")
    back = subprocess.run(as_uid(ATTACKER, ["cat", p.path]), capture_output=True,
                          timeout=TIMEOUT)
    assert back.returncode == 0 and back.stdout == p.content


def test_names_taken_in_advance(pools):
    """Another user created, before the victim's ptt trace started, its former pool name
    /dev/shm/ptt-UID-PID and names with random parts: the victim's session runs and records,
    and the attacker's objects are neither removed nor written to."""
    need_root()
    d = tempfile.mkdtemp(prefix="ptt-security-")
    try:
        os.chmod(d, 0o1777)
        out = f"{d}/victim.ptt"
        env = base_env()
        cmd = as_uid(VICTIM, ["sh", "-c", f'read x; exec "{PTT}" trace -o "{out}" -- '
                                          f'"{prog("flood")}" 2 1000'])
        v = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
        planted = []
        for suffix in [""] + [f"-{secrets.token_hex(8)}" for _ in range(200)]:
            q = pools()
            q.name = f"ptt-{VICTIM}-{v.pid}{suffix}"
            q.path = f"/dev/shm/{q.name}"
            q.write(pool_bytes(q.secret), mode=0o666)
            os.chown(q.path, ATTACKER, ATTACKER)
            planted.append(q)
        out_, err = v.communicate("go\n", timeout=TIMEOUT)
        assert v.returncode == 0 and out_ == "done=2000\n", err
        assert re.search(r"^ptt: wrote [1-9]\d* events", err, re.M), err
        for q in planted:
            st = os.lstat(q.path)
            assert st.st_uid == ATTACKER and stat.S_IMODE(st.st_mode) == 0o666
            assert q.read() == q.content
    finally:
        shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(f"/tmp/ptt-{VICTIM}", ignore_errors=True)
