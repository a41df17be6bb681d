package server

// KeySpec is one of a command's key specifications as COMMAND INFO shows
// them, for commands whose keys the FirstKey/LastKey/Step triple does not
// describe (PFMERGE's destination and sources, SORT's STORE key ...).
type KeySpec struct {
	Notes string
	Flags []string // e.g. "RW", "access", "update"
	// BeginIndex is the index of the first key; 0 means "unknown".
	BeginIndex int
	// LastKey, KeyStep and Limit are the "range" find_keys spec; Unknown
	// makes find_keys "unknown".
	LastKey, KeyStep, Limit int
	Unknown                 bool
	// Keyword, when set, makes begin_search "keyword" (from StartFrom).
	Keyword   string
	StartFrom int
}

func (c *Client) writeKeySpecs(specs []KeySpec) {
	c.Array(len(specs))
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
		if ks.Keyword != "" {
			c.BulkString("keyword")
			c.BulkString("spec")
			c.Map(2)
			c.BulkString("keyword")
			c.BulkString(ks.Keyword)
			c.BulkString("startfrom")
			c.Int(int64(ks.StartFrom))
		} else if ks.BeginIndex == 0 {
			c.BulkString("unknown")
			c.BulkString("spec")
			c.Map(0)
		} else {
			c.BulkString("index")
			c.BulkString("spec")
			c.Map(1)
			c.BulkString("index")
			c.Int(int64(ks.BeginIndex))
		}
		c.BulkString("find_keys")
		c.Map(2)
		c.BulkString("type")
		if ks.Unknown {
			c.BulkString("unknown")
			c.BulkString("spec")
			c.Map(0)
			continue
		}
		c.BulkString("range")
		c.BulkString("spec")
		c.Map(3)
		c.BulkString("lastkey")
		c.Int(int64(ks.LastKey))
		c.BulkString("keystep")
		c.Int(int64(ks.KeyStep))
		c.BulkString("limit")
		c.Int(int64(ks.Limit))
	}
}
