package acl

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ACL is a server's users.
type ACL struct {
	cat   *Catalog
	match func(pattern, s []byte) bool
	users map[string]*User
	// Default is the user every connection starts as; it keeps its
	// identity through ACL LOAD.
	Default *User
	// PubsubDefaultAll is acl-pubsub-default allchannels: new users and
	// selectors may use every channel.
	PubsubDefaultAll bool
	Log              Log
}

// New returns the users of a fresh server: only the default user, on,
// nopass, every command, key and channel.
func New(cat *Catalog, match func(pattern, s []byte) bool) *ACL {
	a := &ACL{cat: cat, match: match, users: map[string]*User{}, Log: Log{Max: 128}}
	a.Default = a.defaultUser()
	a.users["default"] = a.Default
	return a
}

func (a *ACL) defaultUser() *User {
	u := a.newUser("default")
	for _, r := range []string{"+@all", "~*", "&*", "on", "nopass"} {
		a.setUser(u, r)
	}
	return u
}

// Catalog is the command catalog rules name.
func (a *ACL) Catalog() *Catalog { return a.cat }

// User returns a user by name, nil if none.
func (a *ACL) User(name string) *User { return a.users[name] }

// Names lists the user names in order (ACL USERS).
func (a *ACL) Names() []string {
	out := make([]string, 0, len(a.users))
	for n := range a.users {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Authenticate returns the user name/pass authenticates, nil if none.
func (a *ACL) Authenticate(name string, pass []byte) *User {
	u := a.users[name]
	if u == nil || !u.CheckPassword(pass) {
		return nil
	}
	return u
}

// mergeSelectors joins arguments of a selector split by spaces ("(+get"
// "~k)") into one (ACLMergeSelectorArguments); bad is the index of an
// unclosed selector's start, -1 if none.
func mergeSelectors(args []string) (out []string, bad int) {
	open := -1
	var cur string
	for j, op := range args {
		if open < 0 && len(op) > 0 && op[0] == '(' && op[len(op)-1] != ')' {
			cur, open = op, j
			continue
		}
		if open >= 0 {
			cur += " " + op
			if len(op) > 0 && op[len(op)-1] == ')' {
				open = -1
				out = append(out, cur)
			}
			continue
		}
		out = append(out, op)
	}
	if open >= 0 {
		return nil, open
	}
	return out, -1
}

// SetUser applies rules to the user name, creating it if needed, all or
// nothing (ACLStringSetUser); the error is Redis's reply text without
// "ERR ". Before the change takes effect, revoked is called with the old
// and new rules of an existing user (pub/sub clients may lose channels).
func (a *ACL) SetUser(name string, rules []string, revoked func(old, new *User)) error {
	if hasSpaces(name) {
		return errors.New("Usernames can't contain spaces or null characters")
	}
	merged, bad := mergeSelectors(rules)
	if bad >= 0 {
		return fmt.Errorf("Unmatched parenthesis in acl selector starting at '%s'.", rules[bad])
	}
	u := a.users[name]
	tmp := a.newUser(name)
	if u != nil {
		tmp = u.clone()
	}
	for _, r := range merged {
		if err := a.setUser(tmp, r); err != nil {
			return fmt.Errorf("Error in ACL SETUSER modifier '%s': %s", r, err)
		}
	}
	if u == nil {
		u = &User{Name: name}
		a.users[name] = u
	} else if revoked != nil {
		revoked(u, tmp)
	}
	u.copyFrom(tmp)
	return nil
}

// DelUser removes users, returning the removed ones (their clients must
// be disconnected).
func (a *ACL) DelUser(names []string) ([]*User, error) {
	for _, n := range names {
		if n == "default" {
			return nil, errors.New("The 'default' user cannot be removed")
		}
	}
	var out []*User
	for _, n := range names {
		if u := a.users[n]; u != nil {
			delete(a.users, n)
			out = append(out, u)
		}
	}
	return out, nil
}

// UpdateDefaultPassword is requirepass: the default user's only password,
// or nopass for "".
func (a *ACL) UpdateDefaultPassword(pass string) {
	a.setUser(a.Default, "resetpass")
	if pass != "" {
		a.setUser(a.Default, ">"+pass)
	} else {
		a.setUser(a.Default, "nopass")
	}
}

// ConfigUser checks a "user" directive of the config file
// (ACLAppendUserForLoading): rules naming unknown commands are tolerated
// here and fail at ApplyConfigUsers, as in Redis.
func (a *ACL) ConfigUser(args []string) error {
	if len(args) < 1 {
		return errors.New("Error in user declaration")
	}
	merged, bad := mergeSelectors(args[1:])
	if bad >= 0 {
		return fmt.Errorf("Unmatched parenthesis in acl selector starting at '%s'.", args[1+bad])
	}
	tmp := a.newUser(args[0])
	for _, r := range merged {
		if err := a.setUser(tmp, r); err != nil && err != errUnknown {
			return fmt.Errorf("Error in user declaration '%s': %s", r, err)
		}
	}
	return nil
}

// ApplyConfigUsers creates the users of the config file's "user"
// directives (ACLLoadConfiguredUsers); "default" is reset first.
func (a *ACL) ApplyConfigUsers(users [][]string) error {
	seen := map[string]bool{}
	for _, args := range users {
		name := args[0]
		if seen[name] {
			return fmt.Errorf("Duplicate user '%s' found", name)
		}
		seen[name] = true
		if hasSpaces(name) {
			return errors.New("Spaces not allowed in ACL usernames")
		}
		u := a.users[name]
		if u == nil {
			u = a.newUser(name)
			a.users[name] = u
		} else {
			a.setUser(u, "reset")
		}
		merged, _ := mergeSelectors(args[1:])
		for _, r := range merged {
			if err := a.setUser(u, r); err != nil {
				return fmt.Errorf("Error loading ACL rule '%s' for the user named '%s': %s", r, name, err)
			}
		}
	}
	return nil
}

// Load replaces the users with those of an ACL file's text
// (ACLLoadFromFile), all or nothing; it returns the users that are gone
// (their clients must be disconnected: every user but the default one is
// replaced). filename is for error texts.
func (a *ACL) Load(text, filename string) ([]*User, error) {
	users := map[string]*User{}
	var errs strings.Builder
	for i, line := range strings.Split(text, "\n") {
		line = strings.Trim(line, " \t\r\n")
		if line == "" {
			continue
		}
		n := i + 1
		argv := strings.Split(line, " ")
		if argv[0] != "user" || len(argv) < 2 {
			fmt.Fprintf(&errs, "%s:%d should start with user keyword followed by the username. ", filename, n)
			continue
		}
		name := argv[1]
		if hasSpaces(name) {
			fmt.Fprintf(&errs, "'%s:%d: username '%s' contains invalid characters. ", filename, n, name)
			continue
		}
		if users[name] != nil {
			fmt.Fprintf(&errs, "WARNING: Duplicate user '%s' found on line %d. ", name, n)
			continue
		}
		u := a.newUser(name)
		users[name] = u
		merged, bad := mergeSelectors(argv[2:])
		if bad >= 0 {
			fmt.Fprintf(&errs, "%s:%d: Unmatched parenthesis in selector definition.", filename, n)
		}
		syntax := false
		for _, r := range merged {
			r = strings.Trim(r, "\t\r\n")
			if err := a.setUser(u, r); err != nil {
				if err == errUnknown {
					fmt.Fprintf(&errs, "%s:%d: Error in applying operation '%s': %s. ", filename, n, r, err)
				} else if !syntax {
					fmt.Fprintf(&errs, "%s:%d: %s. ", filename, n, err)
					syntax = true
				}
			}
		}
	}
	if errs.Len() > 0 {
		errs.WriteString("WARNING: ACL errors detected, no change to the previously active ACL rules was performed")
		return nil, errors.New(errs.String())
	}
	var gone []*User
	for n, u := range a.users {
		if n != "default" {
			gone = append(gone, u)
		}
	}
	def := users["default"]
	if def == nil {
		def = a.defaultUser()
	}
	a.Default.copyFrom(def)
	users["default"] = a.Default
	a.users = users
	return gone, nil
}

// Save is the ACL file text of the users (ACLSaveToFile).
func (a *ACL) Save() string {
	var b strings.Builder
	for _, n := range a.Names() {
		b.WriteString("user " + n + " " + a.Describe(a.users[n]) + "\n")
	}
	return b.String()
}

// List is ACL LIST: one "user NAME rules" line per user, by name.
func (a *ACL) List() []string {
	var out []string
	for _, n := range a.Names() {
		out = append(out, "user "+n+" "+a.Describe(a.users[n]))
	}
	return out
}
