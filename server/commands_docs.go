package server

import "strings"

// commandDoc is one command's COMMAND DOCS entry as Redis 7.0.15 has it
// (commands_docs_gen.go is generated from Redis's src/commands/*.json).
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
