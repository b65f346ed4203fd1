package rowcodec

import "github.com/sched-dev/sched/internal/record"

// TargetArgs is the values of the targets table's columns for t, in the
// order both drivers name them (tenant_id, name, kind, config, secret,
// version, created_at, updated_at).
func TargetArgs(t *record.Target) []any {
	return []any{t.TenantID, t.Name, string(t.Kind), string(t.Config), t.Secret, t.Version, MS(t.CreatedAt), MS(t.UpdatedAt)}
}

// ScanTarget reads a row of the targets columns, in TargetArgs' order.
func ScanTarget(row Scanner) (*record.Target, error) {
	var (
		t                record.Target
		kind, config     string
		created, updated int64
	)
	if err := row.Scan(&t.TenantID, &t.Name, &kind, &config, &t.Secret, &t.Version, &created, &updated); err != nil {
		return nil, err
	}
	t.Kind, t.Config, t.CreatedAt, t.UpdatedAt = record.TargetKind(kind), []byte(config), FromMS(created), FromMS(updated)
	return &t, nil
}

// TargetUpdateArgs is the values of an update of t over prevVersion:
// tenant_id, name, kind, config, secret, version, updated_at, then
// prevVersion.
func TargetUpdateArgs(t *record.Target, prevVersion int64) []any {
	return []any{t.TenantID, t.Name, string(t.Kind), string(t.Config), t.Secret, t.Version, MS(t.UpdatedAt), prevVersion}
}
