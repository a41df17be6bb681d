// Package rdb holds the building blocks of Redis 7.0's RDB value encoding
// as DUMP, RESTORE and MIGRATE use it: length and string encodings (with
// integer encoding and LZF compression), the listpack, intset, ziplist and
// zipmap blobs, the CRC-64 (Jones) checksum and the DUMP footer (RDB
// version 10). It knows nothing of the keyspace: store builds values from
// these pieces. Written from Redis's format as documented in its rdb.c,
// listpack.c, ziplist.c, intset.c and lzf_c.c; no code is shared.
package rdb

// Version is the RDB version of Redis 7.0, written in every DUMP footer.
const Version = 10

// Object types (the first byte of a DUMP payload).
const (
	TypeString          = 0
	TypeList            = 1
	TypeSet             = 2
	TypeZSet            = 3
	TypeHash            = 4
	TypeZSet2           = 5
	TypeModule          = 6
	TypeModule2         = 7
	TypeHashZipmap      = 9
	TypeListZiplist     = 10
	TypeSetIntset       = 11
	TypeZSetZiplist     = 12
	TypeHashZiplist     = 13
	TypeListQuicklist   = 14
	TypeStreamListpack  = 15
	TypeHashListpack    = 16
	TypeZSetListpack    = 17
	TypeListQuicklist2  = 18
	TypeStreamListpack2 = 19
)

// Quicklist node containers (RDB_TYPE_LIST_QUICKLIST_2).
const (
	ContainerPlain  = 1
	ContainerPacked = 2
)
