package server

import (
	"sort"
	"strings"
	"time"
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

// Names returns the flag names in COMMAND order.
func (f Flag) Names() []string {
	var out []string
	for i, n := range flagNames {
		if f&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// Handler executes a command. argv[0] is the command name as sent. It runs
// with the server lock held and writes exactly one reply to c.
type Handler func(c *Client, argv [][]byte)

// Command is an entry of the command table.
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
	// Subcommands (CONFIG GET, CLIENT LIST, ...) for COMMAND output and
	// per-subcommand arity; the handler still receives the whole argv.
	Subcommands []*Command
	Group       string
	// Protected commands (DEBUG) run only as enable-debug-command allows.
	Protected bool
	// Tips are COMMAND's command tips ("request_policy:multi_shard"...);
	// nil means Redis 7.0's tips for the command's name.
	Tips    []string
	Summary string
	Since   string
	// ACL, when set, is the command's full list of ACL categories (else
	// they follow from its flags and group).
	ACL []string
	// Specs, when set, are the key specs COMMAND INFO shows (else one
	// range spec follows from FirstKey, LastKey and Step).
	Specs []KeySpec

	calls    int64
	usec     int64
	fails    int64
	rejected int64
}

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

// checkArity reports whether n arguments fit arity.
func checkArity(arity, n int) bool {
	if arity > 0 {
		return n == arity
	}
	return n >= -arity
}

// Register adds or replaces a command in the table (cluster mode and
// replication register theirs: CLUSTER, ASKING, WAIT, PSYNC ...). Call it
// before Serve.
func (s *Server) addCommand(cmd *Command) {
	cmd.Name = strings.ToLower(cmd.Name)
	if cmd.Step == 0 && cmd.FirstKey > 0 {
		cmd.Step = 1
	}
	for _, sc := range cmd.Subcommands {
		sc.Name = strings.ToLower(sc.Name)
	}
	s.commands[cmd.Name] = cmd
	s.upperCmds[strings.ToUpper(cmd.Name)] = cmd
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

// Commands returns the command table sorted by name.
func (s *Server) commandList() []*Command {
	out := make([]*Command, 0, len(s.commands))
	for _, c := range s.commands {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// call runs one command: lookup, arity, auth, MULTI queueing, the pre-execute
// hook, the handler, then propagation and WATCH invalidation.
func (c *Client) call(argv [][]byte) { c.callCmd(c.s.Lookup(argv[0]), argv) }

// callCmd is call with argv[0] already looked up (nil: unknown command).
func (c *Client) callCmd(cmd *Command, argv [][]byte) {
	if c.replyMode != replyOn {
		mark := len(c.out)
		if cmd != nil && pushesReply(cmd.Name) {
			mark = -1 // Pub/Sub notifications go out even so, as Redis's CLIENT_PUSHING
		}
		defer c.dropReply(mark, c.replyMode)
	}
	s := c.s
	if cmd == nil {
		c.rejectQueued()
		var b strings.Builder
		b.WriteString("ERR unknown command '")
		b.WriteString(trunc(argv[0], 128))
		b.WriteString("', with args beginning with: ")
		for _, a := range argv[1:] {
			b.WriteString("'")
			b.WriteString(trunc(a, 128))
			b.WriteString("' ")
			if b.Len() > 1024 {
				break
			}
		}
		c.Error(b.String())
		return
	}
	c.cmd = cmd
	c.lastCmd = cmd.Name
	defer s.afterCommand(c, cmd)
	if !checkArity(cmd.Arity, len(argv)) {
		c.reject(ErrArity(cmd.Name))
		return
	}
	if sub := cmd.subcommand(argv); sub != nil && !checkArity(sub.Arity, len(argv)) {
		c.reject("ERR wrong number of arguments for '" + cmd.Name + "|" + sub.Name + "' command")
		return
	} else if cmd.Protected && !c.s.protectedAllowed(c, "enable-debug-command") {
		c.reject("ERR " + strings.ToUpper(cmd.Name) + " command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.")
		return
	} else if sub == nil && len(cmd.Subcommands) > 0 && len(argv) > 1 {
		// Refused before queueing, so MULTI ends in EXECABORT as in Redis.
		c.reject("ERR unknown subcommand '" + trunc(argv[1], 128) + "'. Try " + strings.ToUpper(cmd.Name) + " HELP.")
		return
	}
	if !c.authenticated && cmd.Flags&FlagNoAuth == 0 {
		c.reject(ErrNoAuth)
		return
	}
	if c.ps != nil {
		if e := pubsubRefusal(c, cmd); e != "" {
			c.reject(e)
			return
		}
	}
	if cmd.Flags&FlagWrite != 0 && s.aof != nil && s.aof.lastErr != nil {
		c.reject("MISCONF Errors writing to the AOF file: " + s.aof.lastErr.Error())
		return
	}
	if c.multi && cmd.Flags&FlagNoMulti != 0 {
		c.reject("ERR Command not allowed inside a transaction")
		return
	}
	if e := s.refusal(c, cmd, argv); e != "" {
		c.reject(e)
		return
	}
	if c.multi && !isTxControl(cmd.Name) {
		q := make([][]byte, len(argv))
		for i, a := range argv {
			q[i] = append([]byte(nil), a...)
		}
		c.queue = append(c.queue, q)
		c.Simple("QUEUED")
		return
	}
	c.exec(cmd, argv)
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

func isTxControl(name string) bool {
	switch name {
	case "exec", "discard", "multi", "watch", "quit", "reset":
		return true
	}
	return false
}

// reject refuses a command before it runs. A refused EXEC discards the
// transaction with EXECABORT, as Redis's rejectCommand does.
func (c *Client) reject(msg string) {
	c.rejectQueued()
	if c.cmd != nil {
		c.cmd.rejected++
	}
	if c.cmd != nil && c.cmd.Name == "exec" {
		// Monitors saw MULTI and not the queued commands: EXEC ends it.
		c.s.feedMonitors(c, c.cmd, [][]byte{[]byte("exec")})
		c.resetMulti()
		c.s.unwatchAll(c)
		c.Error("EXECABORT Transaction discarded because of: " + strings.TrimPrefix(msg, "ERR "))
		return
	}
	c.Error(msg)
}

// rejectQueued marks the transaction as failed when a command is refused
// while queueing (EXEC then replies EXECABORT).
func (c *Client) rejectQueued() {
	if c.multi {
		c.multiErr = true
	}
}

// exec runs a checked command and propagates it if it changed the dataset.
func (c *Client) exec(cmd *Command, argv [][]byte) {
	s := c.s
	s.db(c.db).Tick()
	dirty := s.dirty
	c.propSet = false
	var start int64
	if s.slowStats {
		start = nanotime()
	}
	if s.trk != nil && !c.inScript && s.trk.running == nil {
		s.trk.running = c // its own invalidations wait for its reply
		defer s.trackDone(c)
	}
	s.stats.errSeen = s.stats.errorReplies
	cmd.Handler(c, argv)
	if s.stats.errorReplies != s.stats.errSeen {
		cmd.fails++
		s.stats.errSeen = s.stats.errorReplies
	}
	cmd.calls++
	s.stats.commands++
	if s.slowStats {
		d := time.Duration(nanotime() - start)
		cmd.usec += d.Microseconds()
		if !c.inScript {
			s.recordCall(c, cmd, argv, d)
		}
	}
	if s.trk != nil {
		s.trackAfter(c, cmd, argv, s.dirty != dirty && cmd.Flags&FlagWrite != 0)
	}
	if len(s.monitors) > 0 && monitored(cmd, argv) {
		s.feedMonitors(c, cmd, argv)
	}
	if s.dirty != dirty && cmd.Flags&FlagWrite != 0 {
		if c.propSet {
			if len(c.propArgv) > 0 {
				s.propagate(c.db, c.propArgv)
			}
		} else {
			s.propagate(c.db, argv)
		}
		if len(s.watchers) > 0 {
			for _, i := range cmd.KeyIndexes(argv) {
				if i != c.untouched {
					s.touch(c.db, argv[i])
				}
			}
		}
	}
	c.propSet = false
	c.propArgv = nil
	c.untouched = 0
}

func trunc(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}
