package schedule

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sched-dev/sched/internal/timetable"
)

// ValidationError is bad input: Field names the part that is wrong, in the
// API's spelling (cron, time_zone, payload, ...), and Message is the whole
// sentence, naming it too. The API answers with both as they are, so their
// text is part of the API.
type ValidationError struct {
	Field   string
	Message string

	reason string // Message without the field's name in front
}

func (e *ValidationError) Error() string { return e.Message }

// Reason is the sentence without the field's name in front, for callers
// that show the field their own way (schedctl names the flag or the file's
// line and field). A message from the time engine names the part of the
// expression that is wrong and is kept whole.
func (e *ValidationError) Reason() string {
	if e.reason == "" {
		return e.Message
	}
	return e.reason
}

// Invalid is a ValidationError of field whose message is "field: " and
// the formatted reason.
func Invalid(field, format string, args ...any) error {
	r := fmt.Sprintf(format, args...)
	return &ValidationError{Field: field, Message: field + ": " + r, reason: r}
}

// invalidValue is a ValidationError whose message is "field " and the
// formatted reason, which starts with the value ("max_lateness \"0s\":
// ..."): the spelling of the API's parse errors.
func invalidValue(field, format string, args ...any) error {
	r := fmt.Sprintf(format, args...)
	return &ValidationError{Field: field, Message: field + " " + r, reason: r}
}

// FromTimetable turns the time engine's *timetable.InvalidError into a
// ValidationError with its message as is. A part of a cron expression
// ("minute field") is the API's field cron. Other errors are returned
// unchanged.
func FromTimetable(err error) error {
	var ie *timetable.InvalidError
	if !errors.As(err, &ie) {
		return err
	}
	field := ie.Field
	if strings.HasSuffix(field, " field") {
		field = "cron"
	}
	return &ValidationError{Field: field, Message: ie.Msg}
}
