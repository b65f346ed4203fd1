package client_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

// TestIsForbidden: a 403 is forbidden whether schedd's error JSON names
// the code or a proxy answered bare; a 401 is not, nor other errors.
func TestIsForbidden(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&client.Error{Status: http.StatusForbidden, Code: api.CodeForbidden, Message: "an admin's call"}, true},
		{fmt.Errorf("tenant list: %w", &client.Error{Status: http.StatusForbidden, Code: api.CodeForbidden}), true},
		{&client.Error{Status: http.StatusForbidden, Message: "<html>denied</html>"}, true},
		{&client.Error{Status: http.StatusUnauthorized, Code: api.CodeUnauthorized}, false},
		{&client.Error{Status: http.StatusNotFound, Code: api.CodeNotFound}, false},
		{fmt.Errorf("dial: refused"), false},
		{nil, false},
	} {
		if got := client.IsForbidden(tc.err); got != tc.want {
			t.Errorf("IsForbidden(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
