package acl

// Result is a permission check's outcome; a larger denial is the more
// relevant one across selectors (Redis's ACL_DENIED_* order).
type Result int

// Results of Check.
const (
	OK Result = iota
	DeniedCmd
	DeniedKey
	DeniedAuth
	DeniedChannel
)

// Key is one key argument of a command and what the command does to it.
type Key struct {
	Pos  int
	Perm int // PermRead, PermWrite or both
}

// Channel is one channel argument of a command.
type Channel struct {
	Pos     int
	Pattern bool // PSUBSCRIBE: the pattern must be allowed literally
}

// Request is one command to check: the catalog entry (the subcommand for
// a container), argv, and lazily its keys and the channels it publishes
// or subscribes to (computed only for users that restrict them).
type Request struct {
	Cmd      *Command
	Argv     [][]byte
	Keys     func() []Key
	Channels func() []Channel
}

// Check is ACLCheckAllUserCommandPerm: OK if some selector of u allows
// the command with all its keys and channels, else the most relevant
// denial and the position of the argument it concerns.
func (a *ACL) Check(u *User, r Request) (Result, int) {
	if u.unrestricted {
		return OK, 0
	}
	var keys []Key
	keysDone := false
	relevant, lastIdx := DeniedCmd, 0
	for _, s := range u.selectors {
		res, idx := a.checkSelector(s, r, &keys, &keysDone)
		if res == OK {
			return OK, 0
		}
		if res > relevant || (res == relevant && idx > lastIdx) {
			relevant, lastIdx = res, idx
		}
	}
	return relevant, lastIdx
}

func (a *ACL) checkSelector(s *Selector, r Request, keys *[]Key, keysDone *bool) (Result, int) {
	cmd := r.Cmd
	if !s.allCommands && !cmd.NoAuth && !s.bit(cmd.ID) {
		allowed := s.firstArgs[cmd.ID]
		idx := 1
		if cmd.Parent != nil {
			idx = 2
		}
		if len(r.Argv) <= idx || len(allowed) == 0 {
			return DeniedCmd, 0
		}
		ok := false
		for _, f := range allowed {
			ok = ok || equalFold(f, r.Argv[idx])
		}
		if !ok {
			return DeniedCmd, 0
		}
	}
	if !s.allKeys && r.Keys != nil {
		if !*keysDone {
			*keys, *keysDone = r.Keys(), true
		}
		for _, k := range *keys {
			if !a.keyAllowed(s, r.Argv[k.Pos], k.Perm) {
				return DeniedKey, k.Pos
			}
		}
	}
	if !s.allChannels && r.Channels != nil {
		for _, ch := range r.Channels() {
			if !a.channelAllowed(s.channels, r.Argv[ch.Pos], ch.Pattern) {
				return DeniedChannel, ch.Pos
			}
		}
	}
	return OK, 0
}

func (a *ACL) keyAllowed(s *Selector, key []byte, perm int) bool {
	if s.allKeys {
		return true
	}
	for _, p := range s.patterns {
		if p.Perm&perm == perm && a.match([]byte(p.Pattern), key) {
			return true
		}
	}
	return false
}

func (a *ACL) channelAllowed(list []string, ch []byte, pattern bool) bool {
	for _, p := range list {
		if (pattern && p == string(ch)) || (!pattern && a.match([]byte(p), ch)) {
			return true
		}
	}
	return false
}

// ChannelAllowed is ACLUserCheckChannelPerm: whether some selector of u
// allows the channel (or, literally, the pattern).
func (a *ACL) ChannelAllowed(u *User, ch []byte, pattern bool) bool {
	for _, s := range u.selectors {
		if s.allChannels || a.channelAllowed(s.channels, ch, pattern) {
			return true
		}
	}
	return false
}

// KeyAllowed is ACLUserCheckKeyPerm: whether some selector of u allows
// the key with perm.
func (a *ACL) KeyAllowed(u *User, key []byte, perm int) bool {
	for _, s := range u.selectors {
		if a.keyAllowed(s, key, perm) {
			return true
		}
	}
	return false
}

// PubsubRevoked is ACLKillPubsubClientsIfNeeded's test: nil if new keeps
// every channel of old (then no subscriber is affected), else a function
// telling whether a subscription (channel or pattern) is no longer allowed.
func (a *ACL) PubsubRevoked(old, new *User) func(ch []byte, pattern bool) bool {
	for _, s := range new.selectors {
		if s.allChannels {
			return nil
		}
	}
	var upcoming []string
	for _, s := range new.selectors {
		upcoming = append(upcoming, s.channels...)
	}
	match := true
	for _, s := range old.selectors {
		if s.allChannels {
			match = false
			break
		}
		for _, c := range s.channels {
			found := false
			for _, u := range upcoming {
				found = found || u == c
			}
			if !found {
				match = false
			}
		}
	}
	if match {
		return nil
	}
	return func(ch []byte, pattern bool) bool { return !a.channelAllowed(upcoming, ch, pattern) }
}

func equalFold(s string, b []byte) bool {
	if len(s) != len(b) {
		return false
	}
	for i := 0; i < len(s); i++ {
		x, y := s[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Log is the ACL log (ACL LOG), newest first.
type Log struct {
	Max     int
	Entries []*LogEntry
}

// LogEntry is one denial, grouped with equal ones within 60 s.
type LogEntry struct {
	Count      int64
	Reason     string // command, key, channel, auth
	Context    string // toplevel, multi, lua
	Object     string
	Username   string
	TimeMs     int64
	ClientInfo string
}

// Add records a denial at nowMs (addACLLogEntry): an equal entry among
// the 10 newest, updated within 60 s, is counted and moved to the front.
func (l *Log) Add(e LogEntry, nowMs int64) {
	e.TimeMs, e.Count = nowMs, 1
	for i := 0; i < len(l.Entries) && i < 10; i++ {
		m := l.Entries[i]
		d := m.TimeMs - nowMs
		if d < 0 {
			d = -d
		}
		if m.Reason == e.Reason && m.Context == e.Context && d <= 60000 && m.Object == e.Object && m.Username == e.Username {
			m.ClientInfo, m.TimeMs = e.ClientInfo, nowMs
			m.Count++
			copy(l.Entries[1:i+1], l.Entries[:i])
			l.Entries[0] = m
			return
		}
	}
	l.Entries = append([]*LogEntry{&e}, l.Entries...)
	for len(l.Entries) > l.Max {
		l.Entries = l.Entries[:len(l.Entries)-1]
	}
}

// Reasons of Result values as ACL LOG names them.
func (r Result) Reason() string {
	switch r {
	case DeniedCmd:
		return "command"
	case DeniedKey:
		return "key"
	case DeniedChannel:
		return "channel"
	case DeniedAuth:
		return "auth"
	}
	return "unknown"
}

// UnrestrictedKeys is ACLUserCheckCmdWithUnrestrictedKeyAccess: whether
// some selector of u allows the command and every key with perm (SORT's
// BY and GET patterns read keys no key-spec names).
func (a *ACL) UnrestrictedKeys(u *User, r Request, perm int) bool {
	var keys []Key
	done := false
	for _, s := range u.selectors {
		if res, _ := a.checkSelector(s, r, &keys, &done); res != OK {
			continue
		}
		if s.allKeys {
			return true
		}
		for _, p := range s.patterns {
			if p.Perm&perm == perm && p.Pattern == "*" {
				return true
			}
		}
	}
	return false
}
