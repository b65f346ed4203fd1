package server

import (
	"net/http"

	"github.com/sched-dev/sched/internal/store"
)

// forgetNode answers DELETE /v1/cluster/nodes/{id} (admins only): the
// node leaves the registry at once (engine.Cluster.ForgetNode), without
// waiting for the live nodes to remove it; a node that may still run is
// 409 conflict, an unknown one 404. The answer is the node as it was, in
// the form GET /v1/cluster shows it.
func (s *Server) forgetNode(r *http.Request, _ http.ResponseWriter) (int, any, error) {
	if err := onlyQuery(r); err != nil {
		return 0, nil, err
	}
	n, err := s.eng.Cluster.ForgetNode(r.Context(), r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, apiCluster(s.eng.Cluster.NodeID(), s.eng.Cluster.Now(), 0, []store.Node{n}, nil).Nodes[0], nil
}
