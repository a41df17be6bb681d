package server

import (
	"strings"
)

// writeInfo writes one COMMAND entry (Redis 7 layout, 10 fields).
func (c *Client) writeCommandInfo(cmd *Command, fullName string) {
	c.Array(10)
	c.BulkString(fullName)
	c.Int(int64(cmd.Arity))
	flags := cmd.Flags.Names()
	c.SetHeader(len(flags))
	for _, f := range flags {
		c.Simple(f)
	}
	c.Int(int64(cmd.FirstKey))
	c.Int(int64(cmd.LastKey))
	c.Int(int64(cmd.Step))
	acl := cmd.aclCategories()
	c.SetHeader(len(acl))
	for _, a := range acl {
		c.Simple(a)
	}
	tips := cmd.Tips
	c.SetHeader(len(tips))
	for _, tip := range tips {
		c.BulkString(tip) // bulk, unlike the flags and categories (addReplyCommandTips)
	}
	// key specs
	if cmd.InfoSpecs != nil {
		c.writeKeySpecs(cmd.InfoSpecs)
	} else if cmd.FirstKey > 0 {
		c.SetHeader(1)
		c.Map(3)
		c.BulkString("flags")
		var kf []string
		switch {
		case cmd.Flags&FlagWrite != 0:
			kf = []string{"RW", "update"} // Redis: data flags upper, access flags lower case
		default:
			kf = []string{"RO", "access"}
		}
		c.SetHeader(len(kf))
		for _, f := range kf {
			c.Simple(f)
		}
		c.BulkString("begin_search")
		c.Map(2)
		c.BulkString("type")
		c.BulkString("index")
		c.BulkString("spec")
		c.Map(1)
		c.BulkString("index")
		c.Int(int64(cmd.FirstKey))
		c.BulkString("find_keys")
		c.Map(2)
		c.BulkString("type")
		c.BulkString("range")
		c.BulkString("spec")
		c.Map(3)
		last := cmd.LastKey
		if last >= 0 {
			last -= cmd.FirstKey
		}
		c.BulkString("lastkey")
		c.Int(int64(last))
		c.BulkString("keystep")
		c.Int(int64(cmd.Step))
		c.BulkString("limit")
		c.Int(0)
	} else {
		c.SetHeader(0)
	}
	// Redis replies key specs as a set, and no subcommands as an empty set
	// (RESP3), but subcommands as an array.
	if len(cmd.Subcommands) == 0 {
		c.SetHeader(0)
	} else {
		c.Array(len(cmd.Subcommands))
	}
	for _, sc := range cmd.Subcommands {
		c.writeCommandInfo(sc, cmd.Name+"|"+sc.Name)
	}
}

func cmdCommand(c *Client, argv [][]byte) {
	s := c.s
	if len(argv) == 1 {
		cmds := s.commandList()
		c.Array(len(cmds))
		for _, cmd := range cmds {
			c.writeCommandInfo(cmd, cmd.Name)
		}
		return
	}
	switch strings.ToUpper(string(argv[1])) {
	case "COUNT":
		c.Int(int64(len(s.commands)))
	case "INFO":
		if len(argv) == 2 {
			cmds := s.commandList()
			c.Array(len(cmds))
			for _, cmd := range cmds {
				c.writeCommandInfo(cmd, cmd.Name)
			}
			return
		}
		c.Array(len(argv) - 2)
		for _, n := range argv[2:] {
			if cmd, name := s.lookupWithSub(n); cmd != nil {
				c.writeCommandInfo(cmd, name)
			} else {
				c.Null()
			}
		}
	case "DOCS":
		var cmds []*Command
		var names []string
		if len(argv) == 2 {
			cmds = s.commandList()
			for _, cmd := range cmds {
				names = append(names, cmd.Name)
			}
		} else {
			for _, n := range argv[2:] {
				if cmd, full := s.lookupWithSub(n); cmd != nil {
					cmds, names = append(cmds, cmd), append(names, full)
				}
			}
		}
		c.Map(len(cmds))
		for i, cmd := range cmds {
			c.BulkString(names[i])
			c.writeCommandDocs(cmd, names[i])
		}
	case "LIST":
		// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]
		keep := func(name string, cmd *Command) bool { return true }
		switch {
		case len(argv) == 2:
		case len(argv) == 5 && eq(argv[2], "filterby") && eq(argv[3], "module"):
			keep = func(string, *Command) bool { return false } // no modules
		case len(argv) == 5 && eq(argv[2], "filterby") && eq(argv[3], "aclcat"):
			cat := "@" + strings.ToLower(string(argv[4]))
			keep = func(_ string, cmd *Command) bool {
				for _, have := range cmd.aclCategories() {
					if have == cat {
						return true
					}
				}
				return false
			}
		case len(argv) == 5 && eq(argv[2], "filterby") && eq(argv[3], "pattern"):
			pat := []byte(strings.ToLower(string(argv[4])))
			keep = func(name string, _ *Command) bool { return GlobMatch(pat, []byte(name)) }
		default:
			c.Error(ErrSyntax)
			return
		}
		var names []string
		for _, cmd := range s.commandList() {
			if keep(cmd.Name, cmd) {
				names = append(names, cmd.Name)
			}
			for _, sc := range cmd.Subcommands {
				full := cmd.Name + "|" + sc.Name
				withGroup := *sc // a subcommand is in its command's group
				withGroup.Group = cmd.Group
				if keep(full, &withGroup) {
					names = append(names, full)
				}
			}
		}
		c.Array(len(names))
		for _, n := range names {
			c.BulkString(n)
		}
	case "GETKEYS":
		_, args, idx, ok := c.commandGetKeys(argv)
		if !ok {
			return
		}
		c.Array(len(idx))
		for _, i := range idx {
			c.Bulk(args[i])
		}
	case "GETKEYSANDFLAGS":
		cmdCommandGetKeysAndFlags(c, argv)
	case "HELP":
		helpReply(c, "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"(no subcommand)",
			"    Return details about all Redis commands.",
			"COUNT",
			"    Return the total number of commands in this Redis server.",
			"LIST",
			"    Return a list of all commands in this Redis server.",
			"INFO [<command-name> ...]",
			"    Return details about multiple Redis commands.",
			"    If no command names are given, documentation details for all",
			"    commands are returned.",
			"DOCS [<command-name> ...]",
			"    Return documentation details about multiple Redis commands.",
			"    If no command names are given, documentation details for all",
			"    commands are returned.",
			"GETKEYS <full-command>",
			"    Return the keys from a full Redis command.",
			"GETKEYSANDFLAGS <full-command>",
			"    Return the keys and the access flags from a full Redis command.",
			"HELP",
			"    Prints this help.")
	default:
		c.Error("ERR unknown subcommand '\" + trunc(argv[1], 128) + \"'. Try COMMAND HELP.")
	}
}

func cmdCommandGetKeysAndFlags(c *Client, argv [][]byte) {
	cmd, args, idx, ok := c.commandGetKeys(argv)
	if !ok {
		return
	}
	flags := keyFlags(cmd, args, idx)
	c.Array(len(idx))
	for k, i := range idx {
		c.Array(2)
		c.Bulk(args[i])
		c.SetHeader(len(flags[k]))
		for _, f := range flags[k] {
			c.Simple(f)
		}
	}
}

// commandGetKeys is Redis's getKeysSubcommandImpl up to the keys of
// COMMAND GETKEYS[ANDFLAGS] argv: the command (its subcommand for a
// container, none for an unknown one), then whether it has keys at all,
// then its arity; ok is false once a reply (an error, or the empty array
// of a command whose keys are optional) is written.
func (c *Client) commandGetKeys(argv [][]byte) (cmd *Command, args [][]byte, idx []int, ok bool) {
	args = argv[2:]
	cmd = c.s.Lookup(args[0])
	target := cmd
	if cmd != nil && len(cmd.Subcommands) > 0 && len(args) > 1 {
		target = cmd.subcommand(args)
	}
	if target == nil {
		c.Error("ERR Invalid command specified")
		return nil, nil, nil, false
	}
	if target.FirstKey <= 0 && target.Keys == nil && len(target.RedisSpecs) == 0 && (target != cmd || cmd.Keys == nil) {
		c.Error("ERR The command has no key arguments")
		return nil, nil, nil, false
	}
	if !checkArity(target.Arity, len(args)) {
		c.Error("ERR Invalid number of arguments specified for command")
		return nil, nil, nil, false
	}
	idx = cmd.KeyIndexes(args)
	if len(idx) == 0 && target != cmd && target.FirstKey > 0 && target.FirstKey < len(args) {
		idx = []int{target.FirstKey}
	}
	if len(idx) == 0 {
		if target.Flags&FlagNoMandatoryKeys != 0 {
			c.Array(0)
		} else {
			c.Error("ERR Invalid arguments specified for command")
		}
		return nil, nil, nil, false
	}
	return cmd, args, idx, true
}

// commandCommands is the COMMAND family's spec.
func commandCommands() []*Command {
	return []*Command{
		newCmd("command", -1, FlagLoading|FlagStale, 0, 0, 0, cmdCommand, "server").withSubs(
			sub("count", 2, FlagLoading|FlagStale), sub("info", -2, FlagLoading|FlagStale), sub("docs", -2, FlagLoading|FlagStale),
			sub("list", -2, FlagLoading|FlagStale), sub("getkeys", -4, FlagLoading|FlagStale), sub("help", 2, FlagLoading|FlagStale),
			sub("getkeysandflags", -4, FlagLoading|FlagStale)),
	}
}

// writeCommandDocs writes cmd's COMMAND DOCS entry: Redis 7.0.15's for
// the commands Redis has (the fields in addReplyCommandDocs's order, each
// only when Redis has it), a summary, since and group for the reference
// server's own (REDLINE, Redis 8's CLUSTER SLOT-STATS and MIGRATION).
func (c *Client) writeCommandDocs(cmd *Command, fullName string) {
	d := redisDocs[fullName]
	if d == nil {
		c.writeOwnCommandDocs(cmd, fullName)
		return
	}
	n := 1
	for _, present := range []bool{d.Summary != "", d.Since != "", d.Complexity != "", len(d.DocFlags) > 0,
		d.DeprecatedSince != "", d.ReplacedBy != "", len(d.History) > 0, len(d.Args) > 0, len(cmd.Subcommands) > 0} {
		if present {
			n++
		}
	}
	c.Map(n)
	if d.Summary != "" {
		c.BulkString("summary")
		c.BulkString(d.Summary)
	}
	if d.Since != "" {
		c.BulkString("since")
		c.BulkString(d.Since)
	}
	c.BulkString("group")
	c.BulkString(d.Group)
	if d.Complexity != "" {
		c.BulkString("complexity")
		c.BulkString(d.Complexity)
	}
	if len(d.DocFlags) > 0 {
		c.BulkString("doc_flags")
		c.writeStatusSet(d.DocFlags)
	}
	if d.DeprecatedSince != "" {
		c.BulkString("deprecated_since")
		c.BulkString(d.DeprecatedSince)
	}
	if d.ReplacedBy != "" {
		c.BulkString("replaced_by")
		c.BulkString(d.ReplacedBy)
	}
	if len(d.History) > 0 {
		c.BulkString("history")
		c.SetHeader(len(d.History))
		for _, h := range d.History {
			c.Array(2)
			c.BulkString(h[0])
			c.BulkString(h[1])
		}
	}
	if len(d.Args) > 0 {
		c.BulkString("arguments")
		c.writeDocArgs(d.Args)
	}
	c.writeSubcommandDocs(cmd, fullName)
}

func (c *Client) writeSubcommandDocs(cmd *Command, fullName string) {
	if len(cmd.Subcommands) == 0 {
		return
	}
	c.BulkString("subcommands")
	c.Map(len(cmd.Subcommands))
	for _, sc := range cmd.Subcommands {
		c.BulkString(fullName + "|" + sc.Name)
		c.writeCommandDocs(sc, fullName+"|"+sc.Name)
	}
}

// writeStatusSet writes names as Redis's addReplyCommandFlags does: a set
// of status replies.
func (c *Client) writeStatusSet(names []string) {
	c.SetHeader(len(names))
	for _, n := range names {
		c.Simple(n)
	}
}

func (c *Client) writeDocArgs(args []docArg) {
	c.Array(len(args))
	for _, a := range args {
		n := 2
		for _, present := range []bool{a.KeySpecIndex >= 0, a.Token != "" || a.EmptyToken, a.Since != "", a.DeprecatedSince != "",
			len(a.Flags) > 0, a.Type == "oneof" || a.Type == "block"} {
			if present {
				n++
			}
		}
		c.Map(n)
		c.BulkString("name")
		c.BulkString(a.Name)
		c.BulkString("type")
		c.BulkString(a.Type)
		if a.KeySpecIndex >= 0 {
			c.BulkString("key_spec_index")
			c.Int(int64(a.KeySpecIndex))
		}
		if a.Token != "" || a.EmptyToken {
			c.BulkString("token")
			c.BulkString(a.Token)
		}
		if a.Since != "" {
			c.BulkString("since")
			c.BulkString(a.Since)
		}
		if a.DeprecatedSince != "" {
			c.BulkString("deprecated_since")
			c.BulkString(a.DeprecatedSince)
		}
		if len(a.Flags) > 0 {
			c.BulkString("flags")
			c.writeStatusSet(a.Flags)
		}
		if a.Type == "oneof" || a.Type == "block" {
			c.BulkString("arguments")
			c.writeDocArgs(a.Args)
		}
	}
}

// writeOwnCommandDocs is the entry of a command Redis 7.0.15 does not
// have: its summary and since from the spec, its group.
func (c *Client) writeOwnCommandDocs(cmd *Command, fullName string) {
	n := 3
	if len(cmd.Subcommands) > 0 {
		n++
	}
	c.Map(n)
	c.BulkString("summary")
	sum := cmd.Summary
	if sum == "" {
		sum = strings.ToUpper(strings.ReplaceAll(fullName, "|", " ")) + " command"
	}
	c.BulkString(sum)
	c.BulkString("since")
	since := cmd.Since
	if since == "" {
		since = "1.0.0"
	}
	c.BulkString(since)
	c.BulkString("group")
	g := cmd.Group
	if g == "" {
		g = "server"
	}
	c.BulkString(g)
	c.writeSubcommandDocs(cmd, fullName)
}

// writeKeySpecs writes specs as COMMAND INFO's key specifications.
func (c *Client) writeKeySpecs(specs []KeySpec) {
	c.SetHeader(len(specs))
	for _, ks := range specs {
		n := 3
		if ks.Notes != "" {
			n++
			c.Map(n)
			c.BulkString("notes")
			c.BulkString(ks.Notes)
		} else {
			c.Map(n)
		}
		c.BulkString("flags")
		c.SetHeader(len(ks.Flags))
		for _, f := range ks.Flags {
			c.Simple(f)
		}
		c.BulkString("begin_search")
		c.Map(2)
		c.BulkString("type")
		if ks.Begin.Keyword != "" {
			c.BulkString("keyword")
			c.BulkString("spec")
			c.Map(2)
			c.BulkString("keyword")
			c.BulkString(ks.Begin.Keyword)
			c.BulkString("startfrom")
			c.Int(int64(ks.Begin.StartFrom))
		} else if ks.Begin.Unknown || ks.Begin.Index == 0 {
			c.BulkString("unknown")
			c.BulkString("spec")
			c.Map(0)
		} else {
			c.BulkString("index")
			c.BulkString("spec")
			c.Map(1)
			c.BulkString("index")
			c.Int(int64(ks.Begin.Index))
		}
		c.BulkString("find_keys")
		c.Map(2)
		c.BulkString("type")
		if ks.Find.Unknown {
			c.BulkString("unknown")
			c.BulkString("spec")
			c.Map(0)
			continue
		}
		if ks.Find.KeyNum {
			c.BulkString("keynum")
			c.BulkString("spec")
			c.Map(3)
			c.BulkString("keynumidx")
			c.Int(int64(ks.Find.KeyNumIdx))
			c.BulkString("firstkey")
			c.Int(int64(ks.Find.FirstKey))
			c.BulkString("keystep")
			c.Int(int64(ks.Find.Step))
			continue
		}
		c.BulkString("range")
		c.BulkString("spec")
		c.Map(3)
		c.BulkString("lastkey")
		c.Int(int64(ks.Find.LastKey))
		c.BulkString("keystep")
		c.Int(int64(ks.Find.Step))
		c.BulkString("limit")
		c.Int(int64(ks.Find.Limit))
	}
}
