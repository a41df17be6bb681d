// The command table: every family's slice of specs (cmd_*.go), with
// Redis's generated metadata (commands_*_gen.go) merged in. It stands
// above the families: nothing below it names a family.

package server

// commandFamilies are the table's slices, one per cmd_*.go family, in the
// order they are merged (a later spec may not repeat an earlier name).
var commandFamilies = []func() []*Command{
	stringCommands, bitmapCommands, bitfieldCommands, hllCommands, sortCommands, keyspaceCommands,
	hashCommands, setCommands, listCommands, blockingCommands, zsetCommands, geoCommands, multiCommands, scriptingCommands,
	serverCommands, clientCommands, commandCommands, debugCommands, introspectionCommands, streamCommands, pubsubCommands, clusterCommands,
	replCommands, aclCommands,
}

// newCommandTable builds a server's command table from the families (each
// server has its own: the specs carry the server's call statistics),
// merging Redis's generated key specs and tips into every spec and
// subcommand.
func newCommandTable() map[string]*Command {
	t := make(map[string]*Command)
	for _, family := range commandFamilies {
		for _, cmd := range family() {
			if _, dup := t[cmd.Name]; dup {
				panic("command table: " + cmd.Name + " declared twice")
			}
			mergeRedisMetadata(cmd, cmd.Name)
			for _, sc := range cmd.Subcommands {
				mergeRedisMetadata(sc, cmd.Name+"|"+sc.Name)
			}
			t[cmd.Name] = cmd
		}
	}
	return t
}

// mergeRedisMetadata fills what the spec leaves to Redis's generated
// tables: its tips, its key specs, and the key specs COMMAND INFO shows
// where the spec asks for Redis's.
func mergeRedisMetadata(cmd *Command, fullName string) {
	if cmd.Step == 0 && cmd.FirstKey > 0 {
		cmd.Step = 1
	}
	if cmd.Tips == nil {
		cmd.Tips = redisTips[fullName]
	}
	if cmd.ACL == nil {
		cmd.ACL = redisACLCategories[fullName]
	}
	if cmd.RedisSpecs == nil {
		cmd.RedisSpecs = redisKeySpecs[fullName]
	}
	// COMMAND INFO shows Redis's key specs, with their notes, unless the
	// spec gives its own.
	if cmd.InfoSpecs == nil && len(cmd.RedisSpecs) > 0 {
		cmd.InfoSpecs = append([]KeySpec(nil), cmd.RedisSpecs...)
		for i, n := range redisKeySpecNotes[fullName] {
			if i < len(cmd.InfoSpecs) {
				cmd.InfoSpecs[i].Notes = n
			}
		}
		if cmd.infoNotes != "" {
			cmd.InfoSpecs[0].Notes = cmd.infoNotes
		}
	}
}
