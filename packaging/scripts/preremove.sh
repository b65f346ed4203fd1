#!/bin/sh
# Before the sched package is removed (deb prerm, rpm %preun): when it is
# removed for good, not upgraded, schedd is stopped and disabled. Its
# database in /var/lib/sched and the user sched are kept.
set -e

# deb: remove; rpm: 0 (an upgrade is deb upgrade, rpm 1).
case "$1" in
remove | 0)
	if [ -d /run/systemd/system ]; then
		systemctl disable --now schedd.service || true
	fi
	;;
esac
exit 0
