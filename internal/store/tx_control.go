package store

// ControlTx holds the statements the engine's control plane composes inside
// a transaction (see Tx).
type ControlTx interface{}
