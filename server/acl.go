package server

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/redline-dev/redline/server/acl"
)

// The server's side of ACL: the catalog built from the command table,
// the check of every command (call.go calls aclRefusal at one place,
// after auth, as Redis's processCommand), the checks inside EXEC and
// redis.call, authentication, and what a change of users does to
// connected clients. The rule engine is server/acl.

// newACL builds the catalog from the command table (each command and
// subcommand gets its id) and the users from the configuration:
// requirepass, "user" directives, then the aclfile, as Redis's
// ACLLoadUsersAtStartup.
func (s *Server) newACL() error {
	cat := acl.NewCatalog()
	for _, cmd := range s.commandList() {
		cmd.aclCmd = cat.Add(cmd.Name, cmd.aclCategories(), cmd.Flags&FlagNoAuth != 0, nil)
		for _, sc := range cmd.Subcommands {
			sc.aclCmd = cat.Add(sc.Name, sc.aclCategories(), sc.Flags&FlagNoAuth != 0 || cmd.Flags&FlagNoAuth != 0, cmd.aclCmd)
		}
	}
	s.acl = acl.New(cat, GlobMatch)
	s.cfg.ACLUsers = s.acl.List
	s.applyACLConfig()
	if s.cfg.RequirePass != "" {
		s.acl.UpdateDefaultPassword(s.cfg.RequirePass)
	}
	if s.cfg.ACLFile != "" && len(s.cfg.Users) > 0 {
		return fmt.Errorf("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.")
	}
	for _, u := range s.cfg.Users {
		if err := s.acl.ConfigUser(u); err != nil {
			return fmt.Errorf("%s", err)
		}
	}
	if err := s.acl.ApplyConfigUsers(s.cfg.Users); err != nil {
		return fmt.Errorf("%s. Critical error while loading ACLs. Exiting.", err)
	}
	if s.cfg.ACLFile != "" {
		if _, err := s.loadACLFile(); err != nil {
			return fmt.Errorf("Aborting Redis startup because of ACL errors: %s", err)
		}
	}
	return nil
}

// applyACLConfig applies acl-pubsub-default and acllog-max-len.
func (s *Server) applyACLConfig() {
	s.acl.PubsubDefaultAll = s.cfg.ACLPubsubDefault == "allchannels"
	s.acl.Log.Max = s.cfg.ACLLogMaxLen
	for len(s.acl.Log.Entries) > s.acl.Log.Max {
		s.acl.Log.Entries = s.acl.Log.Entries[:len(s.acl.Log.Entries)-1]
	}
}

// loadACLFile replaces the users with the aclfile's, disconnecting the
// clients of the users replaced.
func (s *Server) loadACLFile() ([]*acl.User, error) {
	b, err := os.ReadFile(s.cfg.ACLFile)
	if err != nil {
		msg := err.Error()
		if pe, ok := err.(*os.PathError); ok {
			msg = strings.ToUpper(pe.Err.Error()[:1]) + pe.Err.Error()[1:]
		}
		return nil, fmt.Errorf("Error loading ACLs, opening file '%s': %s", s.cfg.ACLFile, msg)
	}
	return s.acl.Load(string(b), s.cfg.ACLFile)
}

// authRequired is Redis's authRequired: the default user has a password
// or is off, and c did not authenticate.
func (c *Client) authRequired() bool {
	if c.authenticated {
		return false
	}
	d := c.s.acl.Default
	return !d.NoPass() || !d.Enabled()
}

// resetAuth makes c the default user, authenticated if that needs no
// password (a new connection, RESET).
func (c *Client) resetAuth() {
	d := c.s.acl.Default
	c.user = d
	c.authenticated = d.NoPass() && d.Enabled()
	c.parser.Unauthenticated = c.authRequired()
}

// authenticate is ACLAuthenticateUser: on success c becomes the user; on
// failure the attempt goes to the ACL log.
func (c *Client) authenticate(user string, pass []byte, cmdName []byte) bool {
	u := c.s.acl.Authenticate(user, pass)
	if u == nil {
		c.aclLog(acl.DeniedAuth, c.aclContext(), user, string(cmdName))
		return false
	}
	c.user = u
	c.authenticated = true
	c.parser.Unauthenticated = false
	return true
}

func (c *Client) aclContext() string {
	if c.multi {
		return "multi"
	}
	return "toplevel"
}

// userName is the CLIENT LIST user= field.
func (c *Client) userName() string {
	if c.user == nil {
		return "(superuser)"
	}
	return c.user.Name
}

// aclRequest is the check of argv by cmd: the catalog entry of its
// subcommand for a container, its keys with what the command does to
// each, its channels.
func (s *Server) aclRequest(cmd *Command, argv [][]byte) acl.Request {
	r := acl.Request{Cmd: cmd.aclCmd, Argv: argv}
	if sc := cmd.subcommand(argv); sc != nil && sc.aclCmd != nil {
		r.Cmd = sc.aclCmd
		if cmd.Keys == nil && len(sc.RedisSpecs) > 0 {
			// A subcommand's keys are its own key specs' (MEMORY USAGE key).
			r.Keys = func() []acl.Key {
				var out []acl.Key
				for _, ks := range sc.RedisSpecs {
					if slices.Contains(ks.Flags, "not_key") {
						continue
					}
					ps, _ := ks.positions(argv)
					for _, p := range ps {
						out = append(out, acl.Key{Pos: p, Perm: keyPerm(ks.Flags)})
					}
				}
				return out
			}
			return r
		}
	}
	if cmd.FirstKey > 0 || cmd.Keys != nil || len(cmd.RedisSpecs) > 0 || len(cmd.Subcommands) > 0 {
		r.Keys = func() []acl.Key {
			idx := cmd.KeyIndexes(argv)
			if len(idx) == 0 {
				return nil
			}
			flags := keyFlags(cmd, argv, idx)
			out := make([]acl.Key, 0, len(idx))
			for i, p := range idx {
				if !slices.Contains(flags[i], "not_key") { // SPUBLISH's channel (GET_KEYSPEC_DEFAULT skips it)
					out = append(out, acl.Key{Pos: p, Perm: keyPerm(flags[i])})
				}
			}
			return out
		}
	}
	if start, n, pattern, ok := channelArgs(cmd.Name); ok {
		r.Channels = func() []acl.Channel {
			end := len(argv)
			if n > 0 && start+n < end {
				end = start + n
			}
			var out []acl.Channel
			for i := start; i < end; i++ {
				out = append(out, acl.Channel{Pos: i, Pattern: pattern})
			}
			return out
		}
	}
	return r
}

// keyPerm is what ACL requires of a key with these key-spec flags
// (ACLSelectorCheckKey): read for access, write for insert, delete or
// update.
func keyPerm(flags []string) int {
	p := 0
	for _, f := range flags {
		switch f {
		case "access":
			p |= acl.PermRead
		case "insert", "delete", "update":
			p |= acl.PermWrite
		}
	}
	return p
}

// channelArgs is Redis's commands_with_channels for the channels ACL
// checks (publish and subscribe; unsubscribing is always allowed).
func channelArgs(name string) (start, n int, pattern, ok bool) {
	switch name {
	case "subscribe", "ssubscribe":
		return 1, 0, false, true
	case "psubscribe":
		return 1, 0, true, true
	case "publish", "spublish":
		return 1, 1, false, true
	}
	return 0, 0, false, false
}

// aclCheck runs the permission check of argv for c's user.
func (c *Client) aclCheck(cmd *Command, argv [][]byte) (acl.Result, int) {
	if c.user == nil || c.user.Unrestricted() || cmd.aclCmd == nil {
		return acl.OK, 0
	}
	return c.s.acl.Check(c.user, c.s.aclRequest(cmd, argv))
}

// fullKeyAccess reports whether c's user may run argv (c.cmd) with access
// to every key (perm), for what reads keys no key-spec names.
func (c *Client) fullKeyAccess(argv [][]byte, perm int) bool {
	if c.user == nil || c.user.Unrestricted() || c.cmd == nil || c.cmd.aclCmd == nil {
		return true
	}
	return c.s.acl.UnrestrictedKeys(c.user, c.s.aclRequest(c.cmd, argv), perm)
}

// aclRefusal is the NOPERM error for a command c may not run (logged in
// the ACL log), "" if it may.
func (c *Client) aclRefusal(cmd *Command, argv [][]byte) string {
	res, pos := c.aclCheck(cmd, argv)
	if res == acl.OK {
		return ""
	}
	c.aclLogDenial(res, c.aclContext(), cmd, argv, pos)
	switch res {
	case acl.DeniedCmd:
		return "NOPERM this user has no permissions to run the '" + aclFullName(cmd, argv) + "' command"
	case acl.DeniedKey:
		return "NOPERM this user has no permissions to access one of the keys used as arguments"
	case acl.DeniedChannel:
		return "NOPERM this user has no permissions to access one of the channels used as arguments"
	}
	return "no permission"
}

// aclExecRefusal is EXEC's re-check of a queued command (the rules may
// have changed since it was queued).
func (c *Client) aclExecRefusal(cmd *Command, argv [][]byte) string {
	res, pos := c.aclCheck(cmd, argv)
	if res == acl.OK {
		return ""
	}
	c.aclLogDenial(res, "multi", cmd, argv, pos)
	reason := "no permission"
	switch res {
	case acl.DeniedCmd:
		reason = "no permission to execute the command or subcommand"
	case acl.DeniedKey:
		reason = "no permission to touch the specified keys"
	case acl.DeniedChannel:
		reason = "no permission to access one of the channels used as arguments"
	}
	return "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: " + reason
}

// aclScriptRefusal is redis.call's check (scriptVerifyACL), with the
// script's caller in the log entry.
func (c *Client) aclScriptRefusal(cmd *Command, argv [][]byte) string {
	res, pos := c.aclCheck(cmd, argv)
	if res == acl.OK {
		return ""
	}
	c.aclLogDenial(res, "lua", cmd, argv, pos)
	msg := "lacking the permissions for the command"
	switch res {
	case acl.DeniedCmd:
		msg = "can't run this command or subcommand"
	case acl.DeniedKey:
		msg = "can't access at least one of the keys mentioned in the command arguments"
	case acl.DeniedChannel:
		msg = "can't publish to the channel mentioned in the command"
	}
	return "ERR The user executing the script " + msg
}

// aclFullName is the name NOPERM and the log give a command: its
// subcommand's "container|sub" for a container.
func aclFullName(cmd *Command, argv [][]byte) string {
	if sc := cmd.subcommand(argv); sc != nil {
		return cmd.Name + "|" + sc.Name
	}
	return cmd.Name
}

func (c *Client) aclLogDenial(res acl.Result, context string, cmd *Command, argv [][]byte, pos int) {
	object := aclFullName(cmd, argv)
	if res == acl.DeniedKey || res == acl.DeniedChannel {
		object = string(argv[pos])
	}
	name := ""
	if c.user != nil {
		name = c.user.Name
	}
	c.aclLog(res, context, name, object)
}

// aclLog adds an ACL LOG entry; a script's denial shows its caller.
func (c *Client) aclLog(res acl.Result, context, user, object string) {
	real := c
	if c.inScript && c.s.scripts != nil && c.s.scripts.caller != nil {
		real = c.s.scripts.caller
	}
	c.s.acl.Log.Add(acl.LogEntry{Reason: res.Reason(), Context: context, Object: object, Username: user,
		ClientInfo: real.infoLine(time.Now())}, c.s.clock.NowMs())
}

// dropUsersClients disconnects the clients authenticated as users that
// were deleted or replaced; the calling client closes after its reply
// (ACLFreeUserAndKillClients).
func (s *Server) dropUsersClients(gone []*acl.User, current *Client) {
	if len(gone) == 0 {
		return
	}
	set := map[*acl.User]bool{}
	for _, u := range gone {
		set[u] = true
	}
	for _, t := range s.clientList() {
		if t.user == nil || !set[t.user] {
			continue
		}
		t.user, t.authenticated = s.acl.Default, false
		if t == current {
			t.closeNow = true
		} else {
			s.disconnect(t)
		}
	}
}

// disconnect closes another client's connection (CLIENT KILL's way).
func (s *Server) disconnect(t *Client) {
	t.killed.Store(true)
	if t.conn != nil {
		t.conn.Close()
	}
	s.replicaKilled(t)
}

// dropRevokedSubscribers disconnects the subscribers of old whose
// channels or patterns new no longer allows (ACLKillPubsubClientsIfNeeded).
func (s *Server) dropRevokedSubscribers(old, new *acl.User) {
	revoked := s.acl.PubsubRevoked(old, new)
	if revoked == nil {
		return
	}
	for _, t := range s.clientList() {
		if t.user != old || t.ps == nil || clientType(t) != "pubsub" {
			continue
		}
		kill := false
		for p := range t.ps.patterns {
			kill = kill || revoked([]byte(p), true)
		}
		for ch := range t.ps.channels {
			kill = kill || revoked([]byte(ch), false)
		}
		for ch := range t.ps.shard {
			kill = kill || revoked([]byte(ch), false)
		}
		if kill {
			s.disconnect(t)
		}
	}
}
