package client

import "context"

type tenantKey struct{}

// WithTenant returns ctx making the requests sent with it act as tenant
// (the api.HeaderTenant header): an admin's pool worker heartbeating,
// acking or nacking another tenant's occurrence. schedd refuses it with
// 403 forbidden unless the client's token is an admin's, or tenant is its
// own. "" acts as the token's own tenant.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// tenantOf returns the tenant ctx acts as ("" for the token's own).
func tenantOf(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}

// jobContext is ctx acting as job's tenant when the worker is a pool.
func (w *Worker) jobContext(ctx context.Context, job *Job) context.Context {
	if !w.Pool || job.Tenant == "" {
		return ctx
	}
	return WithTenant(ctx, job.Tenant)
}
