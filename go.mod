module github.com/sched-dev/sched

go 1.26

require github.com/adhocore/gronx v1.20.4
