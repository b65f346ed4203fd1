#!/bin/sh
# After the sched package's files are unpacked (deb postinst, rpm %post):
# schedd's state directory, owned by sched and private to it (systemd's
# StateDirectory= would create it too, at the first start), and systemd told
# of the unit. On an upgrade a running schedd is restarted on the new
# binary; a fresh install starts nothing: systemctl enable --now schedd.
set -e

install -d -o sched -g sched -m 0700 /var/lib/sched

# deb: configure OLD-VERSION on an upgrade; rpm: 2 (or more) on an upgrade.
upgrade=false
case "$1" in
configure)
	if [ -n "$2" ]; then upgrade=true; fi
	;;
[0-9]*)
	if [ "$1" -ge 2 ]; then upgrade=true; fi
	;;
esac

if [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
	if [ "$upgrade" = true ]; then
		systemctl try-restart schedd.service || true
	fi
fi
exit 0
