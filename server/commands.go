package server

import (
	"slices"
	"sort"
	"strings"

	"github.com/redline-dev/redline/server/acl"
)

// Flag is a command property, as COMMAND reports it.
type Flag uint32

// Command flags (names as in Redis's COMMAND output).
const (
	FlagWrite Flag = 1 << iota
	FlagReadonly
	FlagDenyOOM
	FlagAdmin
	FlagPubSub
	FlagNoScript
	FlagBlocking
	FlagLoading
	FlagStale
	FlagSkipMonitor
	FlagFast
	FlagNoAuth
	FlagMayReplicate
	FlagNoMulti
	FlagMovableKeys
	FlagAllowBusy
	FlagNoMandatoryKeys
	FlagAsking
	FlagNoAsyncLoading
	FlagSkipSlowlog
)

var flagNames = []string{"write", "readonly", "denyoom", "admin", "pubsub", "noscript", "blocking", "loading",
	"stale", "skip_monitor", "fast", "no_auth", "may_replicate", "no_multi", "movablekeys", "allow_busy",
	"no_mandatory_keys", "asking", "no_async_loading", "skip_slowlog"}

// Names returns the flag names in COMMAND order (addReplyFlagsForCommand's
// table: may_replicate is hidden on purpose, as in Redis).
func (f Flag) Names() []string {
	var out []string
	for _, n := range commandInfoFlagOrder {
		if f&flagNamed(n) != 0 {
			out = append(out, n)
		}
	}
	return out
}

var commandInfoFlagOrder = []string{"write", "readonly", "denyoom", "admin", "pubsub", "noscript", "blocking",
	"loading", "stale", "skip_monitor", "skip_slowlog", "asking", "fast", "no_auth", "no_mandatory_keys",
	"no_async_loading", "no_multi", "movablekeys", "allow_busy"}

// Handler executes a command. argv[0] is the command name as sent. It runs
// with the server lock held and writes exactly one reply to c.
type Handler func(c *Client, argv [][]byte)

// Command is one spec of the command table, as Redis's commands.def has
// one entry per command: everything routing, arity checks, COMMAND INFO,
// COUNT, DOCS, LIST and GETKEYS know about a command is here, and nothing
// about it anywhere else. Each family declares its specs in a slice at the
// end of its cmd_*.go file (stringCommands in cmd_strings.go, ...);
// newCommandTable merges Redis's generated metadata (key specs and tips of
// Redis 7.0.15, commands_redis_gen.go, made by server/internal/gencommands) into them.
type Command struct {
	Name  string // lower case
	Arity int    // Redis convention: >0 exact, <0 at least -Arity
	Flags Flag
	// Key positions: FirstKey (0 = no keys), LastKey (-1 = last argument,
	// -2 = second to last ...), Step.
	FirstKey, LastKey, Step int
	// Keys, when set, extracts key positions for commands whose keys move
	// (EVAL, ...). It must tolerate any argv that passed the arity check.
	Keys    func(argv [][]byte) []int
	Handler Handler
	// Subcommands (CONFIG GET, CLIENT LIST, ...) have their own arity and
	// flags, for COMMAND output and the arity check. A subcommand with a
	// Handler runs it; one without runs its container's, which receives
	// the whole argv.
	Subcommands []*Command
	Group       string
	// Protected commands (DEBUG) run only as enable-debug-command allows.
	Protected bool
	// Tips are COMMAND's command tips ("request_policy:multi_shard"...),
	// Redis 7.0's for the command's name unless the spec sets them.
	Tips    []string
	Summary string
	Since   string
	// ACL, when set, is the command's full list of ACL categories (else
	// they follow from its flags and group).
	ACL []string
	// InfoSpecs, when set, are the key specs COMMAND INFO shows (else one
	// range spec follows from FirstKey, LastKey and Step).
	InfoSpecs []KeySpec
	// RedisSpecs are Redis 7.0's key specs of the command (where its keys
	// are and what it does to each, for GETKEYSANDFLAGS); nil when Redis
	// has none for it.
	RedisSpecs []KeySpec
	// showRedisSpecs makes COMMAND INFO show RedisSpecs (with infoNotes
	// on the first) where no InfoSpecs are given.
	showRedisSpecs bool
	infoNotes      string
	// aclCmd is the command's entry in the ACL catalog (server/acl.go).
	aclCmd *acl.Command

	calls    int64
	usec     int64
	fails    int64
	rejected int64
	// holdsCaller: the command may hold its caller (blocking), set by New.
	holdsCaller bool
	// hist caches the command's latency histogram while histGen is the
	// server's (Server.recordCall).
	hist    *cmdHistogram
	histGen uint64
}

// newCmd is a spec in the table's compact notation: the typed flags
// (FlagWrite|FlagDenyOOM|FlagFast, or a shorthand below), the key triple,
// the handler, the group. A misspelt flag is a compile error, not a panic
// at start.
func newCmd(name string, arity int, flags Flag, first, last, step int, h Handler, group string) *Command {
	return &Command{Name: name, Arity: arity, Flags: flags, FirstKey: first, LastKey: last, Step: step,
		Handler: h, Group: group}
}

// sub is a subcommand's spec: its own arity and flags.
func sub(name string, arity int, flags Flag) *Command {
	return &Command{Name: name, Arity: arity, Flags: flags}
}

// withKeys sets the key extractor of a command whose keys move.
func (cmd *Command) withKeys(f func(argv [][]byte) []int) *Command { cmd.Keys = f; return cmd }

// withSubs sets the subcommands, in the order COMMAND lists them.
func (cmd *Command) withSubs(subs ...*Command) *Command { cmd.Subcommands = subs; return cmd }

// withHandler gives a subcommand a handler of its own.
func (cmd *Command) withHandler(h Handler) *Command { cmd.Handler = h; return cmd }

// withKey makes a subcommand's argv[i] its key (XINFO STREAM key).
func (cmd *Command) withKey(i int) *Command {
	cmd.FirstKey, cmd.LastKey, cmd.Step = i, i, 1
	return cmd
}

// withDocs sets COMMAND DOCS' summary and since.
func (cmd *Command) withDocs(summary, since string) *Command {
	cmd.Summary, cmd.Since = summary, since
	return cmd
}

// withACL sets the full list of ACL categories.
func (cmd *Command) withACL(cats ...string) *Command { cmd.ACL = cats; return cmd }

// withInfoSpecs sets the key specs COMMAND INFO shows.
func (cmd *Command) withInfoSpecs(specs ...KeySpec) *Command { cmd.InfoSpecs = specs; return cmd }

// withRedisInfoSpecs makes COMMAND INFO show Redis's key specs, notes (if
// any) on the first.
func (cmd *Command) withRedisInfoSpecs(notes string) *Command {
	cmd.showRedisSpecs, cmd.infoNotes = true, notes
	return cmd
}

// protected makes a command run only as enable-debug-command allows.
func (cmd *Command) protected() *Command { cmd.Protected = true; return cmd }

// flagNamed is the flag COMMAND calls n (a name of flagNames).
func flagNamed(n string) Flag {
	i := slices.Index(flagNames, n)
	if i < 0 {
		panic("command table: unknown flag " + n)
	}
	return 1 << i
}

// Flag shorthands of the family slices.
const (
	w   = FlagWrite | FlagDenyOOM
	wf  = FlagWrite | FlagDenyOOM | FlagFast
	wr  = FlagWrite
	wrf = FlagWrite | FlagFast
	ro  = FlagReadonly
	rof = FlagReadonly | FlagFast
)

// KeyIndexes returns the positions of the keys in argv.
func (cmd *Command) KeyIndexes(argv [][]byte) []int {
	if cmd.Keys != nil {
		return cmd.Keys(argv)
	}
	first, last, step := cmd.keyRange(len(argv))
	var out []int
	for i := first; i <= last; i += step {
		out = append(out, i)
	}
	return out
}

// keyRange gives the key positions of a command without a Keys function
// for an argv of n arguments: first, first+step, ... up to last (none when
// first > last).
func (cmd *Command) keyRange(n int) (first, last, step int) {
	if cmd.FirstKey <= 0 {
		return 1, 0, 1
	}
	last = cmd.LastKey
	if last < 0 {
		last = n + last
	}
	if last >= n {
		last = n - 1
	}
	step = cmd.Step
	if step <= 0 {
		step = 1
	}
	return cmd.FirstKey, last, step
}

// firstKey returns the first key of argv without allocating, or nil.
func (cmd *Command) firstKey(argv [][]byte) []byte {
	if cmd.Keys != nil {
		k := cmd.Keys(argv)
		if len(k) == 0 {
			return nil
		}
		return argv[k[0]]
	}
	if cmd.FirstKey <= 0 || cmd.FirstKey >= len(argv) {
		return nil
	}
	return argv[cmd.FirstKey]
}

// effectiveFlags are the flags of the command argv runs: a container's
// subcommand's own (XGROUP CREATE is a write, XGROUP is not), as Redis's
// c->cmd is the subcommand.
func (cmd *Command) effectiveFlags(argv [][]byte) Flag {
	if len(cmd.Subcommands) > 0 {
		if sc := cmd.subcommand(argv); sc != nil {
			return sc.Flags
		}
	}
	return cmd.Flags
}

// handlerFor is the handler argv runs: its subcommand's own, if it has
// one, else the command's.
func (cmd *Command) handlerFor(argv [][]byte) Handler {
	if len(cmd.Subcommands) > 0 {
		if sc := cmd.subcommand(argv); sc != nil && sc.Handler != nil {
			return sc.Handler
		}
	}
	return cmd.Handler
}

// checkArity reports whether n arguments fit arity.
func checkArity(arity, n int) bool {
	if arity > 0 {
		return n == arity
	}
	return n >= -arity
}

// Lookup finds a command by name (any case).
func (s *Server) Lookup(name []byte) *Command {
	if cmd, ok := s.commands[string(name)]; ok {
		return cmd
	}
	if cmd, ok := s.upperCmds[string(name)]; ok {
		return cmd
	}
	if len(name) > 64 {
		return s.commands[strings.ToLower(string(name))]
	}
	var buf [64]byte
	b := buf[:len(name)]
	for i, ch := range name {
		if ch >= 'A' && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		b[i] = ch
	}
	return s.commands[string(b)]
}

// commandKeys returns the command for argv and the keys it names (nil
// command if unknown or the arity is wrong).
func (s *Server) commandKeys(argv [][]byte) (*Command, [][]byte) {
	if len(argv) == 0 {
		return nil, nil
	}
	cmd := s.Lookup(argv[0])
	if cmd == nil || !checkArity(cmd.Arity, len(argv)) {
		return nil, nil
	}
	var keys [][]byte
	for _, i := range cmd.KeyIndexes(argv) {
		keys = append(keys, argv[i])
	}
	return cmd, keys
}

// commandList returns the command table sorted by name.
func (s *Server) commandList() []*Command {
	out := make([]*Command, 0, len(s.commands))
	for _, c := range s.commands {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (cmd *Command) subcommand(argv [][]byte) *Command {
	if len(cmd.Subcommands) == 0 || len(argv) < 2 {
		return nil
	}
	for _, sc := range cmd.Subcommands {
		if strings.EqualFold(sc.Name, string(argv[1])) {
			return sc
		}
	}
	return nil
}

// lookupWithSub finds a command or, for "container|sub" (Redis 7's
// COMMAND INFO form, how clients detect CLUSTER|MIGRATION), a subcommand;
// it returns the command and its full name.
func (s *Server) lookupWithSub(name []byte) (*Command, string) {
	container, sub, ok := strings.Cut(string(name), "|")
	if !ok {
		if cmd := s.Lookup(name); cmd != nil {
			return cmd, cmd.Name
		}
		return nil, ""
	}
	cmd := s.Lookup([]byte(container))
	if cmd == nil {
		return nil, ""
	}
	for _, sc := range cmd.Subcommands {
		if strings.EqualFold(sc.Name, sub) {
			return sc, cmd.Name + "|" + sc.Name
		}
	}
	return nil, ""
}

func (cmd *Command) aclCategories() []string {
	if cmd.ACL != nil {
		return cmd.ACL
	}
	var out []string
	switch {
	case cmd.Flags&FlagWrite != 0:
		out = append(out, "@write")
	case cmd.Flags&FlagReadonly != 0:
		out = append(out, "@read")
	}
	if cmd.Group != "" && cmd.Group != "server" && cmd.Group != "generic" {
		out = append(out, "@"+strings.ReplaceAll(cmd.Group, "-", ""))
	} else if cmd.Group == "generic" {
		out = append(out, "@keyspace")
	}
	if cmd.Flags&FlagAdmin != 0 {
		out = append(out, "@admin", "@dangerous")
	}
	if cmd.Flags&FlagFast != 0 {
		out = append(out, "@fast")
	} else {
		out = append(out, "@slow")
	}
	if cmd.Flags&FlagBlocking != 0 {
		out = append(out, "@blocking")
	}
	// Redis lists them in the order of its category table.
	sort.SliceStable(out, func(i, j int) bool { return aclOrder[out[i]] < aclOrder[out[j]] })
	return out
}

var aclOrder = func() map[string]int {
	m := map[string]int{}
	for i, n := range []string{"@keyspace", "@read", "@write", "@set", "@sortedset", "@list", "@hash", "@string",
		"@bitmap", "@hyperloglog", "@geo", "@stream", "@pubsub", "@admin", "@fast", "@slow", "@blocking",
		"@dangerous", "@connection", "@transaction", "@scripting"} {
		m[n] = i + 1
	}
	return m
}()

// KeySpec is one of a command's key specifications, as Redis 7.0 declares
// them (src/commands/*.json): where the keys are (Begin, Find) and what the
// command does to each (Flags: RW/RO/OW/RM, access/update/insert/delete).
// The same type serves COMMAND INFO and GETKEYSANDFLAGS.
type KeySpec struct {
	Notes string
	Flags []string
	Begin KeyBegin
	Find  KeyFind
}

// KeyBegin is begin_search: an index, a keyword searched from StartFrom
// (negative: from the end, backwards), or unknown.
type KeyBegin struct {
	Index     int
	Keyword   string
	StartFrom int
	Unknown   bool
}

// KeyFind is find_keys: a range (LastKey relative to the first key,
// negative from the end; Step; Limit), a key count at KeyNumIdx followed
// by keys from FirstKey, or unknown.
type KeyFind struct {
	LastKey, Step, Limit int
	KeyNum               bool
	KeyNumIdx, FirstKey  int
	Unknown              bool
}
