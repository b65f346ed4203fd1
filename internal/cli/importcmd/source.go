package importcmd

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/internal/schedfile"
)

// maxLine bounds one NDJSON line: one schedule request, as schedd takes
// it alone (its limit on a single create's body).
const maxLine = 1 << 20

// unit is one position of the input: an NDJSON line (blank ones too, so
// that positions are line numbers) or a schedule of a YAML file.
type unit struct {
	pos  int    // 1-based: the line (NDJSON) or the schedule's index (YAML)
	line int    // the line it starts at, for messages
	raw  []byte // what the prefix hash and the derived key are taken of
	item api.BatchItem
	skip bool  // a blank line: nothing to create
	bad  error // the line is not a schedule request; not sent
}

// source yields the input's units in order. next returns io.EOF after
// the last one.
type source interface {
	next() (unit, error)
}

// ndjson reads one schedule request (the body of POST /v1/schedules) per
// line, streaming: one line in memory at a time.
type ndjson struct {
	sc  *bufio.Scanner
	pos int
}

func newNDJSON(r io.Reader) *ndjson {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	return &ndjson{sc: sc}
}

func (n *ndjson) next() (unit, error) {
	if !n.sc.Scan() {
		if err := n.sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				return unit{}, fmt.Errorf("line %d is longer than %d bytes", n.pos+1, maxLine)
			}
			return unit{}, fmt.Errorf("read line %d: %w", n.pos+1, err)
		}
		return unit{}, io.EOF
	}
	n.pos++
	raw := bytes.TrimSpace(n.sc.Bytes())
	u := unit{pos: n.pos, line: n.pos, raw: append([]byte(nil), raw...)}
	if len(raw) == 0 {
		u.skip = true
		return u, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var req api.ScheduleRequest
	if err := dec.Decode(&req); err != nil {
		u.bad = fmt.Errorf("not a schedule request: %w", err)
		return u, nil
	}
	if dec.More() {
		u.bad = errors.New("not a schedule request: more than one JSON value on the line")
		return u, nil
	}
	u.item = keyed(req, raw)
	return u, nil
}

// yamlFile is the schedules file of apply -f, read whole: its format is
// one YAML document, which the parser takes at once (schedfile.MaxSize
// bounds it).
type yamlFile struct {
	entries []schedfile.Entry
	pos     int
}

func newYAML(name string, stdin io.Reader) (*yamlFile, error) {
	es, err := schedfile.Read(name, stdin)
	if err != nil {
		return nil, err
	}
	return &yamlFile{entries: es}, nil
}

func (y *yamlFile) next() (unit, error) {
	if y.pos == len(y.entries) {
		return unit{}, io.EOF
	}
	e := y.entries[y.pos]
	y.pos++
	raw, err := json.Marshal(e.Request)
	if err != nil {
		return unit{}, fmt.Errorf("schedule %d (line %d): %w", y.pos, e.Line, err)
	}
	return unit{pos: y.pos, line: e.Line, raw: raw, item: keyed(e.Request, raw)}, nil
}

// keyed makes the batch item of req: its own idempotency key, or one
// derived from its content (raw), so that importing the same input again
// creates nothing twice.
func keyed(req api.ScheduleRequest, raw []byte) api.BatchItem {
	key := req.IdempotencyKey
	if key == "" {
		sum := sha256.Sum256(raw)
		key = "import:" + hex.EncodeToString(sum[:])
	}
	req.IdempotencyKey = ""
	return api.BatchItem{IdempotencyKey: key, Schedule: req}
}
