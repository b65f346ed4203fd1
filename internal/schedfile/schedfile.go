// Package schedfile reads schedules kept as code: a YAML file of
// schedules keyed by name, as schedctl apply, diff and validate take it and
// as the what-if simulator (schedctl simulate and schedd simulate) does.
// It is one parser for every command that reads such a file, and it links
// neither the engine nor a store, so schedctl may import it.
//
//	schedules:
//	  - name: nightly-report
//	    queue: reports
//	    cron: "0 2 * * *"
//	    time_zone: Europe/Berlin
//	    payload: {format: pdf}       # any YAML value, sent as JSON
//	    misfire_policy: catch_up:3
//
// The fields are those of the API's schedule request (api.ScheduleRequest);
// an unknown field is an error, not silently ignored.
package schedfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/sched-dev/sched/api"
	rules "github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/suggest"
	"github.com/sched-dev/sched/internal/timetable"
)

// MaxSize bounds a schedules file: 1,000 schedules with big payloads.
const MaxSize = 64 << 20

// scheduleFile is the YAML document.
type scheduleFile struct {
	Schedules []fileSchedule `yaml:"schedules"`
}

// fileSchedule is one schedule in the file: the API's request, with the
// payload as any YAML value.
type fileSchedule struct {
	api.ScheduleRequest `yaml:",inline"`
	Payload             yaml.Node `yaml:"payload"`
}

// Error is an invalid schedules file: where, which schedule, which
// field, and what is wrong. schedctl exits 2 on it.
type Error struct {
	File     string
	Line     int    // 0 when unknown
	Index    int    // 1-based position in schedules; 0 when not in one
	Schedule string // its name, when it has one
	Field    string
	Msg      string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	switch {
	case e.Schedule != "":
		fmt.Fprintf(&b, "schedule %q (#%d)", e.Schedule, e.Index)
	case e.Index > 0:
		fmt.Fprintf(&b, "schedule #%d", e.Index)
	}
	if e.Field != "" {
		if e.Index > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "field %s", e.Field)
	}
	if e.Index > 0 || e.Field != "" {
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Entry is one valid schedule of a file: the request it stands for and
// the line it starts at.
type Entry struct {
	Request api.ScheduleRequest
	Line    int
}

// Check validates one schedule request with schedd's rules, as schedd
// would on create, and returns its settings and parsed timetable. Errors
// are *schedule.ValidationError, naming the field.
func Check(r api.ScheduleRequest) (rules.Settings, *timetable.Timetable, error) {
	set, err := rules.FromRequest(&r)
	if err != nil {
		return rules.Settings{}, nil, err
	}
	sp, err := set.Normalize()
	if err != nil {
		return rules.Settings{}, nil, err
	}
	if err := rules.CheckIdempotencyKey(r.IdempotencyKey); err != nil {
		return rules.Settings{}, nil, err
	}
	return set, sp, nil
}

// Read reads and validates the schedules file name ("-" reads stdin) as
// Parse does; the error is an *Error.
func Read(name string, stdin io.Reader) ([]Entry, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(io.LimitReader(stdin, MaxSize+1))
		name = "(stdin)"
	} else {
		var f *os.File
		if f, err = os.Open(name); err == nil {
			data, err = io.ReadAll(io.LimitReader(f, MaxSize+1))
			f.Close()
		}
	}
	if err != nil {
		return nil, &Error{File: name, Msg: err.Error()}
	}
	if len(data) > MaxSize {
		return nil, &Error{File: name, Msg: fmt.Sprintf("over the limit of %d MiB", MaxSize>>20)}
	}
	return Parse(name, data)
}

var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// Parse reads and validates the schedules file data, named name in
// errors. It stops at the first bad schedule; the error is an *Error.
func Parse(name string, data []byte) ([]Entry, error) {
	// The node tree tells which schedule and field a line belongs to.
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		fe := &Error{File: name, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			fe.Line, _ = strconv.Atoi(m[1])
			fe.Msg = m[2]
		}
		return nil, fe
	}
	if root.Kind == 0 {
		return nil, &Error{File: name, Msg: "the file is empty; want a list under schedules:"}
	}
	items := scheduleNodes(&root)

	// KnownFields: a misspelled field (max_latenes) is an error, not a
	// setting silently left at its default.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var doc scheduleFile
	if err := dec.Decode(&doc); err != nil {
		return nil, decodeError(name, err, items)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &Error{File: name, Line: extra.Line, Msg: "more than one YAML document; put every schedule in one schedules: list"}
	}
	if doc.Schedules == nil && root.Content[0].Kind != yaml.MappingNode {
		return nil, &Error{File: name, Line: root.Content[0].Line, Msg: "want a mapping with a schedules: list"}
	}

	entries := make([]Entry, 0, len(doc.Schedules))
	byName := map[string]int{}
	for i, fs := range doc.Schedules {
		item := items[i]
		fail := func(field, msg string) error {
			return &Error{File: name, Line: fieldLine(item, field), Index: i + 1, Schedule: fs.Name, Field: field, Msg: msg}
		}
		r := fs.ScheduleRequest
		if fs.Payload.Kind != 0 {
			p, err := yamlToJSON(&fs.Payload)
			if err != nil {
				return nil, fail("payload", err.Error())
			}
			r.Payload = p
		}
		if _, _, err := Check(r); err != nil {
			var fe *rules.ValidationError
			if errors.As(err, &fe) {
				return nil, fail(fe.Field, fe.Reason())
			}
			return nil, fail("", err.Error())
		}
		if j, dup := byName[r.Name]; dup {
			return nil, fail("name", fmt.Sprintf("also the name of schedule #%d; names are the key and must be unique", j+1))
		}
		byName[r.Name] = i
		entries = append(entries, Entry{Request: r, Line: item.Line})
	}
	return entries, nil
}

// scheduleNodes returns the nodes of the schedules list, if the document
// has one.
func scheduleNodes(root *yaml.Node) []*yaml.Node {
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == "schedules" && m.Content[i+1].Kind == yaml.SequenceNode {
			return m.Content[i+1].Content
		}
	}
	return nil
}

// fieldLine is the line of a schedule's field, or of the schedule.
func fieldLine(item *yaml.Node, field string) int {
	if item == nil {
		return 0
	}
	for i := 0; i+1 < len(item.Content); i += 2 {
		if item.Content[i].Value == field {
			return item.Content[i].Line
		}
	}
	return item.Line
}

var (
	unknownField = regexp.MustCompile(`^field (\S+) not found in type (\S+)`)
)

// fieldNames holds, for each struct type of the file by its Go name (as
// the decoder's errors name it), the YAML fields it has: what an unknown
// field is compared with to suggest the one meant (timezone: time_zone).
var fieldNames = func() map[string][]string {
	m := map[string][]string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || m[t.String()] != nil || t == reflect.TypeFor[yaml.Node]() {
			return
		}
		var names []string
		var add func(t reflect.Type)
		add = func(t reflect.Type) {
			for f := range t.Fields() {
				tag := f.Tag.Get("yaml")
				name, opts, _ := strings.Cut(tag, ",")
				if tag == "-" || !f.IsExported() {
					continue
				}
				if strings.Contains(opts, "inline") {
					add(f.Type)
					continue
				}
				if name == "" {
					name = strings.ToLower(f.Name)
				}
				names = append(names, name)
				walk(f.Type)
			}
		}
		add(t)
		m[t.String()] = names
	}
	walk(reflect.TypeFor[scheduleFile]())
	return m
}()

// unknownFieldMsg says a field is unknown, with the field of its type
// (goType, the decoder's name for it) that was probably meant.
func unknownFieldMsg(field, goType string) string {
	if hint := suggest.Closest(field, fieldNames[goType], 2); hint != "" {
		return fmt.Sprintf("unknown field %q; did you mean %s?", field, hint)
	}
	return fmt.Sprintf("unknown field %q", field)
}

// decodeError turns the decoder's first error into a Error naming the
// schedule and the field at its line.
func decodeError(name string, err error, items []*yaml.Node) error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	fe := &Error{File: name, Msg: strings.TrimPrefix(msg, "yaml: ")}
	m := yamlLine.FindStringSubmatch(msg)
	if m == nil {
		return fe
	}
	fe.Line, _ = strconv.Atoi(m[1])
	fe.Msg = m[2]
	if u := unknownField.FindStringSubmatch(fe.Msg); u != nil {
		fe.Field = u[1]
		fe.Msg = unknownFieldMsg(u[1], u[2])
	}
	// The schedule is the last one starting at or before the line.
	for i, it := range items {
		if it.Line > fe.Line {
			break
		}
		fe.Index = i + 1
		fe.Schedule = ""
		for j := 0; j+1 < len(it.Content); j += 2 {
			k, v := it.Content[j], it.Content[j+1]
			if k.Value == "name" && v.Kind == yaml.ScalarNode {
				fe.Schedule = v.Value
			}
			if fe.Field == "" && (k.Line == fe.Line || v.Line == fe.Line) {
				fe.Field = k.Value
			}
		}
	}
	if fe.Index == 0 && fe.Field != "" && !strings.Contains(fe.Msg, "did you mean") {
		fe.Msg += "; the file wants a schedules: list"
	}
	return fe
}

// yamlToJSON converts a YAML value to JSON: mappings become objects (keys
// as text), sequences arrays, scalars what YAML says they are. A value
// JSON cannot hold (.inf, .nan) is an error.
func yamlToJSON(n *yaml.Node) (json.RawMessage, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	v, err := jsonValue(v)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return b, nil
}

func jsonValue(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			j, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			x[k] = j
		}
		return x, nil
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			j, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			m[fmt.Sprint(k)] = j
		}
		return m, nil
	case []any:
		for i, e := range x {
			j, err := jsonValue(e)
			if err != nil {
				return nil, err
			}
			x[i] = j
		}
		return x, nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, fmt.Errorf("%v has no JSON form", x)
		}
	}
	return v, nil
}
