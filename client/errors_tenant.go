package client

import (
	"net/http"

	"github.com/sched-dev/sched/api"
)

// IsForbidden reports whether err says the credentials are valid but their
// role may not make the request: a tenant's token asking for what only an
// admin of the default tenant may do (managing tenants and their tokens).
func IsForbidden(err error) bool {
	e := asError(err)
	return e != nil && (e.Code == api.CodeForbidden || e.Code == "" && e.Status == http.StatusForbidden)
}
