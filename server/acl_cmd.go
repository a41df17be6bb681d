package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/server/acl"
)

// ACL (Redis 7.0's aclCommand).
func cmdACL(c *Client, argv [][]byte) {
	s := c.s
	defer s.refreshProtected() // SETUSER default, LOAD may change its nopass
	a := s.acl
	sub := strings.ToLower(string(argv[1]))
	switch {
	case sub == "setuser":
		rules := make([]string, len(argv)-3)
		for i, r := range argv[3:] {
			rules[i] = string(r)
		}
		if err := a.SetUser(string(argv[2]), rules, s.dropRevokedSubscribers); err != nil {
			c.Error("ERR " + err.Error())
			return
		}
		c.OK()
	case sub == "deluser":
		names := make([]string, len(argv)-2)
		for i, n := range argv[2:] {
			names[i] = string(n)
		}
		gone, err := a.DelUser(names)
		if err != nil {
			c.Error("ERR " + err.Error())
			return
		}
		s.dropUsersClients(gone, c)
		c.Int(int64(len(gone)))
	case sub == "getuser" && len(argv) == 3:
		u := a.User(string(argv[2]))
		if u == nil {
			c.Null()
			return
		}
		info := a.Info(u)
		c.Map(6)
		c.BulkString("flags")
		c.SetHeader(len(info.Flags))
		for _, f := range info.Flags {
			c.BulkString(f)
		}
		c.BulkString("passwords")
		c.Array(len(info.Passwords))
		for _, p := range info.Passwords {
			c.BulkString(p)
		}
		writeSelectorInfo(c, info.Root)
		c.BulkString("selectors")
		c.Array(len(info.Selectors))
		for _, si := range info.Selectors {
			c.Map(3)
			writeSelectorInfo(c, si)
		}
	case (sub == "list" || sub == "users") && len(argv) == 2:
		if sub == "users" {
			names := a.Names()
			c.Array(len(names))
			for _, n := range names {
				c.BulkString(n)
			}
			return
		}
		lines := a.List()
		c.Array(len(lines))
		for _, l := range lines {
			c.BulkString(l)
		}
	case sub == "whoami" && len(argv) == 2:
		if c.user == nil {
			c.Null()
			return
		}
		c.BulkString(c.user.Name)
	case s.cfg.ACLFile == "" && (sub == "load" || sub == "save"):
		c.Error("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.")
	case sub == "load" && len(argv) == 2:
		gone, err := s.loadACLFile()
		if err != nil {
			c.Error("ERR " + err.Error())
			return
		}
		s.dropUsersClients(gone, c)
		c.OK()
	case sub == "save" && len(argv) == 2:
		if err := writeFileAtomic(s.cfg.ACLFile, []byte(a.Save())); err != nil {
			s.Logf('#', "Writing ACL file for ACL SAVE: %v", err)
			c.Error("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
			return
		}
		c.OK()
	case sub == "cat" && len(argv) == 2:
		c.Array(len(acl.Categories))
		for _, cat := range acl.Categories {
			c.BulkString(cat)
		}
	case sub == "cat" && len(argv) == 3:
		flag := acl.CategoryFlag(string(argv[2]))
		if flag == 0 {
			c.Error("ERR Unknown category '" + trunc(argv[2], 128) + "'")
			return
		}
		names := a.Catalog().InCategory(flag)
		c.Array(len(names))
		for _, n := range names {
			c.BulkString(n)
		}
	case sub == "genpass" && (len(argv) == 2 || len(argv) == 3):
		bits := int64(256)
		if len(argv) == 3 {
			n, ok := parseInt(argv[2])
			if !ok {
				c.Error(ErrNotInt)
				return
			}
			bits = n
		}
		if bits <= 0 || bits > 4096 {
			c.Error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096")
			return
		}
		chars := (bits + 3) / 4
		b := make([]byte, (chars+1)/2)
		rand.Read(b)
		c.BulkString(hex.EncodeToString(b)[:chars])
	case sub == "log" && (len(argv) == 2 || len(argv) == 3):
		count := int64(10)
		if len(argv) == 3 {
			if eq(argv[2], "reset") {
				a.Log.Entries = nil
				c.OK()
				return
			}
			n, ok := parseInt(argv[2])
			if !ok {
				c.Error(ErrNotInt)
				return
			}
			count = max(n, 0)
		}
		count = min(count, int64(len(a.Log.Entries)))
		now := s.clock.NowMs()
		c.Array(int(count))
		for _, e := range a.Log.Entries[:count] {
			c.Map(7)
			c.BulkString("count")
			c.Int(e.Count)
			c.BulkString("reason")
			c.BulkString(e.Reason)
			c.BulkString("context")
			c.BulkString(e.Context)
			c.BulkString("object")
			c.BulkString(e.Object)
			c.BulkString("username")
			c.BulkString(e.Username)
			c.BulkString("age-seconds")
			c.Double(float64(now-e.TimeMs) / 1000)
			c.BulkString("client-info")
			c.BulkString(e.ClientInfo)
		}
	case sub == "dryrun" && len(argv) >= 4:
		u := a.User(string(argv[2]))
		if u == nil {
			c.Error(fmt.Sprintf("ERR User '%s' not found", argv[2]))
			return
		}
		args := argv[3:]
		cmd := s.Lookup(args[0])
		if cmd != nil && len(cmd.Subcommands) > 0 && len(args) > 1 && cmd.subcommand(args) == nil {
			cmd = nil // Redis's lookupCommand: an unknown subcommand is no command
		}
		if cmd == nil {
			c.Error(fmt.Sprintf("ERR Command '%s' not found", args[0]))
			return
		}
		arity, full := cmd.Arity, cmd.Name
		if sc := cmd.subcommand(args); sc != nil {
			arity, full = sc.Arity, cmd.Name+"|"+sc.Name
		}
		if !checkArity(arity, len(args)) {
			c.Error("ERR wrong number of arguments for '" + full + "' command")
			return
		}
		res, pos := acl.OK, 0
		if !u.Unrestricted() && cmd.aclCmd != nil {
			res, pos = a.Check(u, s.aclRequest(cmd, args))
		}
		switch res {
		case acl.OK:
			c.OK()
		case acl.DeniedCmd:
			c.BulkString("This user has no permissions to run the '" + full + "' command")
		case acl.DeniedKey:
			c.BulkString("This user has no permissions to access the '" + string(args[pos]) + "' key")
		case acl.DeniedChannel:
			c.BulkString("This user has no permissions to access the '" + string(args[pos]) + "' channel")
		}
	case sub == "help" && len(argv) == 2:
		help := []string{
			"ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"CAT [<category>]",
			"    List all commands that belong to <category>, or all command categories",
			"    when no category is specified.",
			"DELUSER <username> [<username> ...]",
			"    Delete a list of users.",
			"DRYRUN <username> <command> [<arg> ...]",
			"    Returns whether the user can execute the given command without executing the command.",
			"GETUSER <username>",
			"    Get the user's details.",
			"GENPASS [<bits>]",
			"    Generate a secure 256-bit user password. The optional `bits` argument can",
			"    be used to specify a different size.",
			"LIST",
			"    Show users details in config file format.",
			"LOAD",
			"    Reload users from the ACL file.",
			"LOG [<count> | RESET]",
			"    Show the ACL log entries.",
			"SAVE",
			"    Save the current config to the ACL file.",
			"SETUSER <username> <attribute> [<attribute> ...]",
			"    Create or modify a user with the specified attributes.",
			"USERS",
			"    List all the registered usernames.",
			"WHOAMI",
			"    Return the current connection username.",
			"HELP",
			"    Prints this help.",
		}
		c.Array(len(help))
		for _, h := range help {
			c.Simple(h)
		}
	default:
		c.Error("ERR unknown subcommand or wrong number of arguments for '" + trunc(argv[1], 128) + "'. Try ACL HELP.")
	}
}

func writeSelectorInfo(c *Client, si acl.SelectorInfo) {
	c.BulkString("commands")
	c.BulkString(si.Commands)
	c.BulkString("keys")
	c.BulkString(si.Keys)
	c.BulkString("channels")
	c.BulkString(si.Channels)
}

// writeFileAtomic writes a temporary file beside path and renames it over
// path, as ACL SAVE does.
func writeFileAtomic(path string, data []byte) error {
	tmp := filepath.Join(filepath.Dir(path), filepath.Base(path)+".tmp-"+strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// aclCommands is the ACL container's spec.
func aclCommands() []*Command {
	adm := FlagAdmin | FlagNoScript | FlagLoading | FlagStale
	return []*Command{
		newCmd("acl", -2, 0, 0, 0, 0, cmdACL, "server").withDocs("A container for Access List Control commands ", "6.0.0").withSubs(
			sub("getuser", 3, adm), sub("log", -2, adm), sub("genpass", -2, FlagNoScript|FlagLoading|FlagStale), sub("save", 2, adm),
			sub("deluser", -3, adm), sub("whoami", 2, FlagNoScript|FlagLoading|FlagStale), sub("users", 2, adm), sub("setuser", -3, adm),
			sub("help", 2, FlagLoading|FlagStale), sub("dryrun", -4, adm), sub("cat", -2, FlagNoScript|FlagLoading|FlagStale), sub("list", 2, adm),
			sub("load", 2, adm)),
	}
}
