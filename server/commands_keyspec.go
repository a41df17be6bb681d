package server

import (
	"strconv"
	"strings"
)

// positions evaluates a spec on argv (argv[0] the command) as Redis's
// getKeysUsingKeySpecs does; ok is false for arguments the spec cannot
// make sense of.
func (ks KeySpec) positions(argv [][]byte) (pos []int, ok bool) {
	argc := len(argv)
	first := 0
	switch {
	case ks.Begin.Unknown:
		return nil, true
	case ks.Begin.Keyword != "":
		start, end, dir := ks.Begin.StartFrom, argc-1, 1
		if start < 0 {
			start, end, dir = argc+start, 0, -1
		}
		for i := start; i != end+dir; i += dir {
			if i >= argc || i < 1 {
				break
			}
			if strings.EqualFold(string(argv[i]), ks.Begin.Keyword) {
				first = i + 1
				break
			}
		}
		if first == 0 {
			return nil, true
		}
	default:
		first = ks.Begin.Index
	}
	last, step := 0, 1
	switch {
	case ks.Find.Unknown:
		return nil, true
	case ks.Find.KeyNum:
		i := first + ks.Find.KeyNumIdx
		if i >= argc {
			return nil, false
		}
		n, err := strconv.Atoi(string(argv[i]))
		if err != nil || n < 0 {
			return nil, false
		}
		first += ks.Find.FirstKey
		step = ks.Find.Step
		last = first + (n-1)*step
	default:
		step = ks.Find.Step
		switch {
		case ks.Find.LastKey >= 0:
			last = first + ks.Find.LastKey
		case ks.Find.Limit == 0:
			last = argc + ks.Find.LastKey
		default:
			last = first + ((argc-first)/ks.Find.Limit + ks.Find.LastKey)
		}
	}
	for i := first; i <= last; i += step {
		if i >= argc || i < first {
			return pos, false
		}
		pos = append(pos, i)
	}
	return pos, true
}

// keyFlags returns the key-spec flags of each key position of argv, from
// Redis's key specs of the command (or of its subcommand).
func keyFlags(cmd *Command, argv [][]byte, idx []int) [][]string {
	name, specs := cmd.Name, cmd.RedisSpecs
	if sub := cmd.subcommand(argv); sub != nil {
		name, specs = cmd.Name+"|"+sub.Name, sub.RedisSpecs
	}
	out := make([][]string, len(idx))
	for k, i := range idx {
		for _, ks := range specs {
			ps, _ := ks.positions(argv)
			for _, p := range ps {
				if p == i {
					out[k] = specFlags(name, ks.Flags, argv)
					break
				}
			}
			if out[k] != nil {
				break
			}
		}
		if out[k] == nil && name == "sort" {
			out[k] = []string{"OW", "update"} // sortGetKeys's STORE key, which no spec finds
		}
		if out[k] == nil {
			if cmd.Flags&FlagWrite != 0 {
				out[k] = []string{"RW", "update"}
			} else {
				out[k] = []string{"RO", "access"}
			}
		}
	}
	return out
}

// specFlags resolves variable_flags as Redis's getkeys procs do.
func specFlags(name string, flags []string, argv [][]byte) []string {
	var out []string
	variable := false
	for _, f := range flags {
		if f == "variable_flags" {
			variable = true
			continue
		}
		out = append(out, f)
	}
	if variable && name == "set" {
		for _, a := range argv[3:] {
			if strings.EqualFold(string(a), "get") {
				return []string{"RW", "access", "update"}
			}
		}
		return []string{"OW", "update"}
	}
	if variable && name == "bitfield" {
		// bitfieldGetKeys: read-only while every operation is a complete GET
		// or OVERFLOW.
		for i := 2; i < len(argv); i++ {
			rem := len(argv) - i - 1
			switch {
			case strings.EqualFold(string(argv[i]), "get") && rem >= 2:
				i += 2
			case strings.EqualFold(string(argv[i]), "overflow") && rem >= 1:
				i++
			default:
				return []string{"RW", "access", "update"}
			}
		}
		return []string{"RO", "access"}
	}
	return out
}
