#!/bin/sh
# After the sched package is removed or upgraded (deb postrm, rpm %postun):
# systemd forgets the unit that is gone.
set -e

if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
exit 0
