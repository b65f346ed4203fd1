package store

// QueueTx holds the statements the engine's queue composes inside a
// transaction (see Tx).
type QueueTx interface{}
