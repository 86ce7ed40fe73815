#!/usr/bin/env python3
"""Runs a command as if the disk were full: no file it writes may grow past
LIMIT bytes.

    limit_file_size.py LIMIT [--stdout FILE] COMMAND [ARG]...

RLIMIT_FSIZE makes every write past LIMIT fail (EFBIG, "File too large"),
for root as well: a full disk that needs no file system of its own and that
tests running as root cannot bypass, unlike a read-only directory. SIGXFSZ,
which would otherwise end the process, is ignored and blocked (the signal
mask survives exec, and LLVM's crash handlers, which replace an ignored
disposition, then never see it), so that the write fails instead.

The command's stdout and stderr are pipes to this script, which has no
limit: it passes stderr on and writes stdout to FILE (or its own stdout), so
that a command writing its result to stdout still delivers all of it. The
exit status is the command's.
"""

import resource
import shutil
import signal
import subprocess
import sys


def limit(size):
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGXFSZ})
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return apply


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit("usage: limit_file_size.py LIMIT [--stdout FILE] COMMAND...")
    size = int(args.pop(0))
    stdout = None
    if args[0] == "--stdout":
        stdout = args[1]
        args = args[2:]
    child = subprocess.Popen(args, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=limit(size))
    out, err = child.communicate()
    sys.stderr.buffer.write(err)
    if stdout:
        with open(stdout, "wb") as f:
            f.write(out)
    else:
        sys.stdout.buffer.write(out)
    sys.exit(child.returncode)


if __name__ == "__main__":
    main()
