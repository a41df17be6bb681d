package history

// OpName is the name of a client op, its "f" (read, write, add, acquire,
// enqueue ...): the type of the constants by which a workload writes its
// ops and its checkers read them, so that both name an op by one
// constant. Op.F stays a string (it also names nemesis events, and the
// history format holds it as a plain JSON string); Name reads it as an
// OpName.
type OpName string

// Name is the op's "f" as an OpName.
func (o *Op) Name() OpName { return OpName(o.F) }
