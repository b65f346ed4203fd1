package schedule

import (
	"io"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/schedfile"
)

// Schedules as code: the file format and its parser are package
// schedfile's, shared with the what-if simulator; apply, diff and validate
// add each schedule's normal form, which they compare with schedd's.

// FileError is an invalid schedules file (schedfile.Error); schedctl exits
// 2 on it.
type FileError = schedfile.Error

// fileEntry is one valid schedule of a file, with its normal form.
type fileEntry struct {
	Request api.ScheduleRequest
	Norm    *normalForm
	Line    int
}

// readScheduleFile reads and validates a schedules file offline. It stops
// at the first bad schedule; the error is a *FileError.
func readScheduleFile(name string, stdin io.Reader) ([]fileEntry, error) {
	es, err := schedfile.Read(name, stdin)
	if err != nil {
		return nil, err
	}
	return withNormalForms(es)
}

func parseScheduleFile(name string, data []byte) ([]fileEntry, error) {
	es, err := schedfile.Parse(name, data)
	if err != nil {
		return nil, err
	}
	return withNormalForms(es)
}

// withNormalForms adds the normal form of each entry, which schedfile has
// already validated.
func withNormalForms(es []schedfile.Entry) ([]fileEntry, error) {
	out := make([]fileEntry, len(es))
	for i, e := range es {
		norm, err := checkRequest(e.Request)
		if err != nil {
			return nil, err
		}
		out[i] = fileEntry{Request: e.Request, Norm: norm, Line: e.Line}
	}
	return out, nil
}
