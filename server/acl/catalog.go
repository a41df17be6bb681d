// Package acl is the reference server's access-control engine, as Redis
// 7.0's acl.c: users with passwords and flags, selectors of command, key
// and channel rules, their textual description (ACL LIST, GETUSER), the
// permission check of one command, the ACL file and the ACL log. It has
// no I/O and no clock of its own: the server hands it its command
// catalog, a glob matcher, file contents and the time.
package acl

import (
	"sort"
	"strings"
)

// Categories are Redis 7.0's ACL categories in its table's order (ACL CAT
// lists them so, and the description of a user tries them in this order).
var Categories = []string{"keyspace", "read", "write", "set", "sortedset", "list", "hash", "string",
	"bitmap", "hyperloglog", "geo", "stream", "pubsub", "admin", "fast", "slow", "blocking",
	"dangerous", "connection", "transaction", "scripting"}

// CategoryFlag returns the bit of a category name (any case), 0 if unknown.
func CategoryFlag(name string) uint64 {
	for i, c := range Categories {
		if strings.EqualFold(c, name) {
			return 1 << i
		}
	}
	return 0
}

// Command is one command or subcommand as rules name it.
type Command struct {
	ID       int
	FullName string // "get", "config|get"
	Cats     uint64 // category bits
	NoAuth   bool   // no_auth commands (AUTH, HELLO...) are always allowed
	Parent   *Command
	Subs     []*Command
}

// Catalog is the set of commands rules may name, with ids for the
// selectors' bitmaps.
type Catalog struct {
	top    []*Command // sorted by name
	all    []*Command // by id
	byName map[string]*Command
}

// NewCatalog returns an empty catalog.
func NewCatalog() *Catalog { return &Catalog{byName: map[string]*Command{}} }

// Add registers a command (parent nil) or a subcommand of parent, with
// its categories ("@read" or "read").
func (k *Catalog) Add(name string, cats []string, noAuth bool, parent *Command) *Command {
	cmd := &Command{ID: len(k.all), FullName: strings.ToLower(name), NoAuth: noAuth, Parent: parent}
	if parent != nil {
		cmd.FullName = parent.FullName + "|" + cmd.FullName
		parent.Subs = append(parent.Subs, cmd)
		sort.Slice(parent.Subs, func(i, j int) bool { return parent.Subs[i].FullName < parent.Subs[j].FullName })
	} else {
		k.top = append(k.top, cmd)
		sort.Slice(k.top, func(i, j int) bool { return k.top[i].FullName < k.top[j].FullName })
	}
	for _, c := range cats {
		cmd.Cats |= CategoryFlag(strings.TrimPrefix(c, "@"))
	}
	k.all = append(k.all, cmd)
	k.byName[cmd.FullName] = cmd
	return cmd
}

// Lookup finds "cmd" or "cmd|sub" (any case).
func (k *Catalog) Lookup(name string) *Command { return k.byName[strings.ToLower(name)] }

// InCategory lists the full names of the commands and subcommands in a
// category, each command followed by its subcommands (ACL CAT <cat>).
func (k *Catalog) InCategory(flag uint64) []string {
	var out []string
	var walk func([]*Command)
	walk = func(cmds []*Command) {
		for _, c := range cmds {
			if c.Cats&flag != 0 {
				out = append(out, c.FullName)
			}
			walk(c.Subs)
		}
	}
	walk(k.top)
	return out
}

// size is the number of ids.
func (k *Catalog) size() int { return len(k.all) }
