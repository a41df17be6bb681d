package server

// commandDoc is one command's COMMAND DOCS entry as Redis 7.0.15 has it
// (commands_redis_gen.go is generated from Redis's src/commands/*.json by server/internal/gencommands).
type commandDoc struct {
	Summary, Since, Group, Complexity string
	DocFlags                          []string
	DeprecatedSince, ReplacedBy       string
	History                           [][2]string
	Args                              []docArg
}

// docArg is one argument of a COMMAND DOCS entry; KeySpecIndex is -1 for
// an argument that is not a key.
type docArg struct {
	Name, Type                    string
	KeySpecIndex                  int
	Token, Since, DeprecatedSince string
	// EmptyToken: the token is there and empty (MIGRATE's "").
	EmptyToken bool
	Flags      []string
	Args       []docArg
}
