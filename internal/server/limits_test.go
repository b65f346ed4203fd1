package server

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/api"
)

// rawRequest writes head (a request's line and headers, no body) on a new
// connection to the harness and reads the answer. The read deadline only
// guards against a hang; the point is that the answer comes without a
// body having been sent.
func rawRequest(t *testing.T, h *harness, head string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", h.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to headers alone: %v", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, raw
}

// A declared Content-Length over MaxBody is refused from the headers, at
// once, with 413 payload_too_large: the server does not wait for a body it
// would refuse.
func TestHugeContentLengthRefusedFromHeaders(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, path := range []string{"/v1/schedules", "/v1/claims", "/v1/nowhere"} {
		resp, raw := rawRequest(t, h, "POST "+path+" HTTP/1.1\r\nHost: sched\r\nContent-Type: application/json\r\nContent-Length: 100000000000000\r\n\r\n")
		var eb api.ErrorBody
		if err := json.Unmarshal(raw, &eb); err != nil {
			t.Fatalf("%s: not an error body: %s", path, raw)
		}
		if resp.StatusCode != 413 || eb.Error.Code != api.CodeTooLarge || !strings.Contains(eb.Error.Message, "1048576") {
			t.Fatalf("%s: %d %+v, want 413 %s naming the limit", path, resp.StatusCode, eb.Error, api.CodeTooLarge)
		}
	}
	// One byte over the limit is refused too; at the limit the body is read
	// (and judged on its content).
	resp, _ := rawRequest(t, h, "POST /v1/schedules HTTP/1.1\r\nHost: sched\r\nContent-Length: 1048577\r\n\r\n")
	if resp.StatusCode != 413 {
		t.Fatalf("MaxBody+1: %d, want 413", resp.StatusCode)
	}
	h.fails(400, api.CodeBadRequest, "", "POST", "/v1/schedules", strings.Repeat(" ", MaxBody))
}
