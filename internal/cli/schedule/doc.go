// Package schedule is the commands on schedules: create, get, list,
// update, pause, resume, cancel and trigger, and schedules kept as code in
// YAML files (apply, diff, validate) with the offline checks and normal
// form they share.
package schedule
