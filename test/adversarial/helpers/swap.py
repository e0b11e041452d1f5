# Swaps two directory entries atomically (renameat2 RENAME_EXCHANGE) as fast as it can, until the
# stop file appears; prints how many swaps it made. The attacker of test/adversarial/symlink-race.
import ctypes, os, sys
a, b, stop = sys.argv[1].encode(), sys.argv[2].encode(), sys.argv[3]
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
n = 0
while not os.path.exists(stop):
    for _ in range(200):
        if libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
            sys.stderr.write("renameat2 failed: errno %d\n" % ctypes.get_errno())
            sys.exit(2)
        n += 1
# Leave the real folder under its own name.
if os.path.islink(a.decode()):
    libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
print(n)
