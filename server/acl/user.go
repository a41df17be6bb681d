package acl

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/redline-dev/redline/server/resp"
)

// Key permissions of a key pattern (%R~, %W~, %RW~ or ~).
const (
	PermRead  = 1
	PermWrite = 2
	PermAll   = PermRead | PermWrite
)

// KeyPattern is one key pattern of a selector.
type KeyPattern struct {
	Pattern string
	Perm    int
}

func (p KeyPattern) String() string {
	switch p.Perm {
	case PermRead:
		return "%R~" + p.Pattern
	case PermWrite:
		return "%W~" + p.Pattern
	}
	return "~" + p.Pattern
}

// Selector is a set of command, key and channel rules; a user's first
// selector is its root (the rules outside parentheses).
type Selector struct {
	root        bool
	allKeys     bool
	allChannels bool
	allCommands bool
	// bits has one bit per catalog id; future is Redis's extra bit for
	// commands added later, set only by +@all.
	bits      []uint64
	future    bool
	firstArgs map[int][]string // allowed first arguments of otherwise denied commands
	patterns  []KeyPattern
	channels  []string
}

func (s *Selector) bit(id int) bool { return s.bits[id/64]&(1<<(id%64)) != 0 }

func (s *Selector) setBit(id int, v bool) {
	if v {
		s.bits[id/64] |= 1 << (id % 64)
	} else {
		s.bits[id/64] &^= 1 << (id % 64)
		s.allCommands = false
	}
}

func (s *Selector) clone() *Selector {
	d := *s
	d.bits = append([]uint64(nil), s.bits...)
	d.patterns = append([]KeyPattern(nil), s.patterns...)
	d.channels = append([]string(nil), s.channels...)
	d.firstArgs = nil
	for id, a := range s.firstArgs {
		if d.firstArgs == nil {
			d.firstArgs = map[int][]string{}
		}
		d.firstArgs[id] = append([]string(nil), a...)
	}
	return &d
}

// User flags, in the order Redis describes them.
const (
	flagOn = 1 << iota
	flagOff
	flagNoPass
	flagSkipSanitize
	flagSanitize
)

var userFlagNames = []string{"on", "off", "nopass", "skip-sanitize-payload", "sanitize-payload"}

// User is one ACL user.
type User struct {
	Name      string
	flags     int
	passwords []string // SHA-256 hex
	selectors []*Selector
	// unrestricted caches "every command on every key and channel" so the
	// default user's check costs one branch.
	unrestricted bool
	described    string
}

// Enabled reports whether the user is on.
func (u *User) Enabled() bool { return u.flags&flagOff == 0 }

// NoPass reports whether any password authenticates the user.
func (u *User) NoPass() bool { return u.flags&flagNoPass != 0 }

// Unrestricted reports whether the user may run every command on every
// key and channel.
func (u *User) Unrestricted() bool { return u.unrestricted }

func (u *User) root() *Selector { return u.selectors[0] }

func (u *User) changed() {
	u.described = ""
	r := u.root()
	u.unrestricted = r.allCommands && r.allKeys && r.allChannels
}

// HashPassword is Redis's password hash: SHA-256 in lower-case hex.
func HashPassword(p []byte) string {
	h := sha256.Sum256(p)
	return hex.EncodeToString(h[:])
}

func validHash(h string) bool {
	if len(h) != 64 {
		return false
	}
	for _, c := range h {
		if (c < 'a' || c > 'f') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// CheckPassword reports whether pass authenticates u (time-independent
// comparison of the hashes).
func (u *User) CheckPassword(pass []byte) bool {
	if u.flags&flagOff != 0 {
		return false
	}
	if u.NoPass() {
		return true
	}
	h := HashPassword(pass)
	for _, p := range u.passwords {
		diff := byte(0)
		for i := 0; i < len(h) && i < len(p); i++ {
			diff |= h[i] ^ p[i]
		}
		if diff == 0 && len(p) == len(h) {
			return true
		}
	}
	return false
}

// Rule errors (ACLSetUserStringError's texts).
var (
	errUnknown    = errors.New("Unknown command or category name in ACL")
	errSyntax     = errors.New("Syntax error")
	errKeysAfter  = errors.New("Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns")
	errChansAfter = errors.New("Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels")
	errNoSuchPass = errors.New("The password you are trying to remove from the user does not exist")
	errBadHash    = errors.New("The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters")
	errChild      = errors.New("Allowing first-arg of a subcommand is not supported")
)

func hasSpaces(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\n', '\v', '\f', '\r', 0:
			return true
		}
	}
	return false
}

// newSelector is an empty selector; allChannels as acl-pubsub-default.
func (a *ACL) newSelector(root bool) *Selector {
	return &Selector{root: root, allChannels: a.PubsubDefaultAll, bits: make([]uint64, a.cat.size()/64+1)}
}

// newUser is a user as ACLCreateUser makes it: off, no rules.
func (a *ACL) newUser(name string) *User {
	u := &User{Name: name, flags: flagOff, selectors: []*Selector{a.newSelector(true)}}
	u.changed()
	return u
}

func (u *User) clone() *User {
	d := *u
	d.passwords = append([]string(nil), u.passwords...)
	d.selectors = make([]*Selector, len(u.selectors))
	for i, s := range u.selectors {
		d.selectors[i] = s.clone()
	}
	return &d
}

// copyFrom makes u's rules src's, keeping u's identity (clients keep
// pointing at it).
func (u *User) copyFrom(src *User) {
	name := u.Name
	*u = *src.clone()
	u.Name = name
	u.changed()
}

// setUser applies one rule to u (ACLSetUser).
func (a *ACL) setUser(u *User, op string) error {
	defer u.changed()
	if op == "" {
		return nil
	}
	low := strings.ToLower(op)
	switch {
	case low == "on":
		u.flags = u.flags&^flagOff | flagOn
	case low == "off":
		u.flags = u.flags&^flagOn | flagOff
	case low == "skip-sanitize-payload":
		u.flags = u.flags&^flagSanitize | flagSkipSanitize
	case low == "sanitize-payload":
		u.flags = u.flags&^flagSkipSanitize | flagSanitize
	case low == "nopass":
		u.flags |= flagNoPass
		u.passwords = nil
	case low == "resetpass":
		u.flags &^= flagNoPass
		u.passwords = nil
	case op[0] == '>' || op[0] == '#':
		h := op[1:]
		if op[0] == '>' {
			h = HashPassword([]byte(op[1:]))
		} else if !validHash(h) {
			return errBadHash
		}
		found := false
		for _, p := range u.passwords {
			found = found || p == h
		}
		if !found {
			u.passwords = append(u.passwords, h)
		}
		u.flags &^= flagNoPass
	case op[0] == '<' || op[0] == '!':
		h := op[1:]
		if op[0] == '<' {
			h = HashPassword([]byte(op[1:]))
		} else if !validHash(h) {
			return errBadHash
		}
		for i, p := range u.passwords {
			if p == h {
				u.passwords = append(u.passwords[:i:i], u.passwords[i+1:]...)
				return nil
			}
		}
		return errNoSuchPass
	case op[0] == '(' && op[len(op)-1] == ')':
		s := a.newSelector(false)
		args, ok := resp.SplitArgs([]byte(op[1:len(op)-1]), nil)
		if !ok {
			return errSyntax
		}
		for _, arg := range args {
			if err := a.setSelector(s, string(arg)); err != nil {
				return err
			}
		}
		u.selectors = append(u.selectors, s)
	case low == "clearselectors":
		u.selectors = u.selectors[:1]
	case low == "reset":
		for _, r := range []string{"resetpass", "resetkeys", "resetchannels"} {
			a.setUser(u, r)
		}
		if a.PubsubDefaultAll {
			a.setUser(u, "allchannels")
		}
		for _, r := range []string{"off", "sanitize-payload", "clearselectors", "-@all"} {
			a.setUser(u, r)
		}
	default:
		return a.setSelector(u.root(), op)
	}
	return nil
}

// setSelector applies one selector rule (ACLSetSelector).
func (a *ACL) setSelector(s *Selector, op string) error {
	low := strings.ToLower(op)
	switch {
	case low == "allkeys" || op == "~*":
		s.allKeys, s.patterns = true, nil
	case low == "resetkeys":
		s.allKeys, s.patterns = false, nil
	case low == "allchannels" || op == "&*":
		s.allChannels, s.channels = true, nil
	case low == "resetchannels":
		s.allChannels, s.channels = false, nil
	case low == "allcommands" || low == "+@all":
		for i := range s.bits {
			s.bits[i] = ^uint64(0)
		}
		s.future, s.allCommands, s.firstArgs = true, true, nil
	case low == "nocommands" || low == "-@all":
		for i := range s.bits {
			s.bits[i] = 0
		}
		s.future, s.allCommands, s.firstArgs = false, false, nil
	case op[0] == '~' || op[0] == '%':
		if s.allKeys {
			return errKeysAfter
		}
		perm, off := PermAll, 1
		if op[0] == '%' {
			perm = 0
			for ; off < len(op); off++ {
				c := op[off]
				if (c == 'R' || c == 'r') && perm&PermRead == 0 {
					perm |= PermRead
				} else if (c == 'W' || c == 'w') && perm&PermWrite == 0 {
					perm |= PermWrite
				} else if c == '~' {
					off++
					break
				} else {
					return errSyntax
				}
			}
		}
		pat := op[off:]
		if hasSpaces(pat) {
			return errSyntax
		}
		found := false
		for i := range s.patterns {
			if s.patterns[i].Pattern == pat {
				s.patterns[i].Perm |= perm
				found = true
			}
		}
		if !found {
			s.patterns = append(s.patterns, KeyPattern{pat, perm})
		}
		s.allKeys = false
	case op[0] == '&':
		if s.allChannels {
			return errChansAfter
		}
		pat := op[1:]
		if hasSpaces(pat) {
			return errSyntax
		}
		found := false
		for _, c := range s.channels {
			found = found || c == pat
		}
		if !found {
			s.channels = append(s.channels, pat)
		}
		s.allChannels = false
	case op[0] == '+' && (len(op) < 2 || op[1] != '@'):
		name := op[1:]
		i := strings.LastIndexByte(name, '|')
		if i < 0 {
			cmd := a.cat.Lookup(name)
			if cmd == nil {
				return errUnknown
			}
			a.changePerm(s, cmd, true)
			return nil
		}
		cmd := a.cat.Lookup(name[:i])
		switch {
		case cmd == nil:
			return errUnknown
		case cmd.Parent != nil:
			return errChild
		case i == len(name)-1:
			return errSyntax
		case len(cmd.Subs) > 0:
			sub := a.cat.Lookup(name)
			if sub == nil {
				return errUnknown
			}
			a.changePerm(s, sub, true)
		default:
			// Deprecated in Redis: a first argument of a command without
			// subcommands (+select|0).
			first := name[i+1:]
			for _, f := range s.firstArgs[cmd.ID] {
				if strings.EqualFold(f, first) {
					return nil
				}
			}
			if s.firstArgs == nil {
				s.firstArgs = map[int][]string{}
			}
			s.firstArgs[cmd.ID] = append(s.firstArgs[cmd.ID], first)
		}
	case op[0] == '-' && (len(op) < 2 || op[1] != '@'):
		cmd := a.cat.Lookup(op[1:])
		if cmd == nil {
			return errUnknown
		}
		a.changePerm(s, cmd, false)
	case (op[0] == '+' || op[0] == '-') && op[1] == '@':
		flag := CategoryFlag(op[2:])
		if flag == 0 {
			return errUnknown
		}
		a.setCategory(s, flag, op[0] == '+')
	default:
		return errSyntax
	}
	return nil
}

// changePerm sets a command's bit and its subcommands' (ACLChangeSelectorPerm).
func (a *ACL) changePerm(s *Selector, cmd *Command, allow bool) {
	s.setBit(cmd.ID, allow)
	delete(s.firstArgs, cmd.ID)
	for _, sub := range cmd.Subs {
		s.setBit(sub.ID, allow)
	}
}

func (a *ACL) setCategory(s *Selector, flag uint64, allow bool) {
	var walk func([]*Command)
	walk = func(cmds []*Command) {
		for _, c := range cmds {
			if c.Cats&flag != 0 {
				a.changePerm(s, c, allow)
			}
			walk(c.Subs)
		}
	}
	walk(a.cat.top)
}

func (a *ACL) countCategory(s *Selector, flag uint64) (on, off int) {
	for _, c := range a.cat.all {
		if c.Cats&flag != 0 {
			if s.bit(c.ID) {
				on++
			} else {
				off++
			}
		}
	}
	return
}

// describeCommands is ACLDescribeSelectorCommandRules: +@all or -@all,
// then the categories that explain most bits, then single commands.
func (a *ACL) describeCommands(s *Selector) string {
	var rules strings.Builder
	fake := a.newSelector(false)
	additive := !s.future
	if additive {
		rules.WriteString("-@all ")
		a.setSelector(fake, "-@all")
	} else {
		rules.WriteString("+@all ")
		a.setSelector(fake, "+@all")
	}
	temp := s.clone()
	applied := make([]bool, len(Categories))
	for {
		best, mindiff, maxsame := -1, int(^uint(0)>>1), 0
		for j := range Categories {
			if applied[j] {
				continue
			}
			on, off := a.countCategory(temp, 1<<j)
			diff, same := on, off
			if additive {
				diff, same = off, on
			}
			if same > diff && (diff < mindiff || (diff == mindiff && same > maxsame)) {
				best, mindiff, maxsame = j, diff, same
			}
		}
		if best < 0 {
			break
		}
		a.setCategory(fake, 1<<best, additive)
		a.setCategory(temp, 1<<best, !additive)
		if additive {
			rules.WriteString("+@")
		} else {
			rules.WriteString("-@")
		}
		rules.WriteString(Categories[best])
		rules.WriteByte(' ')
		applied[best] = true
	}
	var single func([]*Command)
	single = func(cmds []*Command) {
		for _, c := range cmds {
			user, have := s.bit(c.ID), fake.bit(c.ID)
			if user != have {
				if user {
					rules.WriteByte('+')
				} else {
					rules.WriteByte('-')
				}
				rules.WriteString(c.FullName)
				rules.WriteByte(' ')
				a.changePerm(fake, c, user)
			}
			single(c.Subs)
			if !user {
				for _, f := range s.firstArgs[c.ID] {
					rules.WriteString("+" + c.FullName + "|" + f + " ")
				}
			}
		}
	}
	single(a.cat.top)
	out := rules.String()
	return out[:len(out)-1]
}

// keysString is a selector's key patterns ("~*" for allkeys).
func (s *Selector) keysString() string {
	if s.allKeys {
		return "~*"
	}
	parts := make([]string, len(s.patterns))
	for i, p := range s.patterns {
		parts[i] = p.String()
	}
	return strings.Join(parts, " ")
}

// channelsString is a selector's channel patterns ("&*" for allchannels).
func (s *Selector) channelsString() string {
	if s.allChannels {
		return "&*"
	}
	parts := make([]string, len(s.channels))
	for i, c := range s.channels {
		parts[i] = "&" + c
	}
	return strings.Join(parts, " ")
}

func (a *ACL) describeSelector(s *Selector) string {
	var b strings.Builder
	if s.allKeys {
		b.WriteString("~* ")
	} else {
		for _, p := range s.patterns {
			b.WriteString(p.String() + " ")
		}
	}
	if s.allChannels {
		b.WriteString("&* ")
	} else {
		b.WriteString("resetchannels ")
		for _, c := range s.channels {
			b.WriteString("&" + c + " ")
		}
	}
	b.WriteString(a.describeCommands(s))
	return b.String()
}

// Describe is the user's rules as ACL LIST shows them after "user NAME ".
func (a *ACL) Describe(u *User) string {
	if u.described != "" {
		return u.described
	}
	var b strings.Builder
	for i, n := range userFlagNames {
		if u.flags&(1<<i) != 0 {
			b.WriteString(n + " ")
		}
	}
	for _, p := range u.passwords {
		b.WriteString("#" + p + " ")
	}
	for _, s := range u.selectors {
		if s.root {
			b.WriteString(a.describeSelector(s))
		} else {
			b.WriteString(" (" + a.describeSelector(s) + ")")
		}
	}
	u.described = b.String()
	return u.described
}

// SelectorInfo is one selector as ACL GETUSER shows it.
type SelectorInfo struct{ Commands, Keys, Channels string }

// UserInfo is ACL GETUSER's reply.
type UserInfo struct {
	Flags     []string
	Passwords []string
	Root      SelectorInfo
	Selectors []SelectorInfo
}

// Info describes a user for ACL GETUSER.
func (a *ACL) Info(u *User) UserInfo {
	var info UserInfo
	for i, n := range userFlagNames {
		if u.flags&(1<<i) != 0 {
			info.Flags = append(info.Flags, n)
		}
	}
	info.Passwords = append([]string(nil), u.passwords...)
	for _, s := range u.selectors {
		si := SelectorInfo{a.describeCommands(s), s.keysString(), s.channelsString()}
		if s.root {
			info.Root = si
		} else {
			info.Selectors = append(info.Selectors, si)
		}
	}
	return info
}
