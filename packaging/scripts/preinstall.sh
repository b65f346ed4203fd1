#!/bin/sh
# Before the sched package's files are unpacked (deb preinst, rpm %pre):
# the system user and group sched, which schedd.service runs as. Nothing is
# done when they exist.
set -e

if ! getent group sched >/dev/null 2>&1; then
	groupadd --system sched
fi
if ! getent passwd sched >/dev/null 2>&1; then
	nologin=/usr/sbin/nologin
	[ -x "$nologin" ] || nologin=/sbin/nologin
	useradd --system --gid sched --home-dir /var/lib/sched --no-create-home \
		--shell "$nologin" --comment "sched job scheduler" sched
fi
exit 0
