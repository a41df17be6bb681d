// Geo commands (Redis geo.c): a geo index is a sorted set whose scores are
// 52-bit geohashes (package geohash has the geometry).

package server

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/redline-dev/redline/server/geohash"
	"github.com/redline-dev/redline/server/store"
)

// parseLongLat is extractLongLatOrReply: two floats, then the range check
// whose error prints them with C's %f.
func (c *Client) parseLongLat(lonArg, latArg []byte) (float64, float64, bool) {
	lon, ok := parseFloat(lonArg)
	if !ok {
		c.Error(ErrNotFloat)
		return 0, 0, false
	}
	lat, ok := parseFloat(latArg)
	if !ok {
		c.Error(ErrNotFloat)
		return 0, 0, false
	}
	if lon < geohash.LongMin || lon > geohash.LongMax || lat < geohash.LatMin || lat > geohash.LatMax {
		c.Error("ERR invalid longitude,latitude pair " + cFormatF(lon) + "," + cFormatF(lat))
		return 0, 0, false
	}
	return lon, lat, true
}

// cFormatF is C's printf("%f"): Go's %f but for C's spelling of the
// infinities.
func cFormatF(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return fmt.Sprintf("%f", f)
}

// parseGeoUnit is extractUnitOrReply: meters per unit.
func (c *Client) parseGeoUnit(b []byte) (float64, bool) {
	switch strings.ToLower(string(b)) {
	case "m":
		return 1, true
	case "km":
		return 1000, true
	case "ft":
		return 0.3048, true
	case "mi":
		return 1609.34, true
	}
	c.Error("ERR unsupported unit provided. please use M, KM, FT, MI")
	return 0, false
}

// parseGeoRadius is extractDistanceOrReply: "<radius> <unit>".
func (c *Client) parseGeoRadius(shape *geohash.Shape, num, unit []byte) bool {
	r, ok := parseFloat(num)
	if !ok {
		c.Error("ERR need numeric radius")
		return false
	}
	if r < 0 {
		c.Error("ERR radius cannot be negative")
		return false
	}
	conv, ok := c.parseGeoUnit(unit)
	if !ok {
		return false
	}
	shape.Radius, shape.Conversion = r, conv
	return true
}

// parseGeoBox is extractBoxOrReply: "<width> <height> <unit>".
func (c *Client) parseGeoBox(shape *geohash.Shape, wArg, hArg, unit []byte) bool {
	w, ok := parseFloat(wArg)
	if !ok {
		c.Error("ERR need numeric width")
		return false
	}
	h, ok := parseFloat(hArg)
	if !ok {
		c.Error("ERR need numeric height")
		return false
	}
	if h < 0 || w < 0 {
		c.Error("ERR height or width cannot be negative")
		return false
	}
	conv, ok := c.parseGeoUnit(unit)
	if !ok {
		return false
	}
	shape.Width, shape.Height, shape.Conversion = w, h, conv
	return true
}

// geoDistance formats a distance as Redis's addReplyDoubleDistance: four
// decimals of llrint(d*10000) (round half to even), "0.0000" for zero.
func geoDistance(d float64) string {
	if d == 0 {
		return "0.0000"
	}
	v := d * 10000
	var n int64
	if r := math.RoundToEven(v); r != r || r >= 9223372036854775808.0 || r < -9223372036854775808.0 {
		n = math.MinInt64 // llrint's result out of range on x86-64
	} else {
		n = int64(r)
	}
	neg := n < 0
	u := uint64(n)
	if neg {
		u = -u
	}
	digits := strconv.FormatUint(u, 10)
	if len(digits) < 5 {
		digits = strings.Repeat("0", 5-len(digits)) + digits
	}
	s := digits[:len(digits)-4] + "." + digits[len(digits)-4:]
	if neg {
		s = "-" + s
	}
	return s
}

// humanDouble replies a coordinate as addReplyHumanLongDouble: "%.17Lf"
// without trailing zeros, a bulk string in RESP2 and a double in RESP3.
func (c *Client) humanDouble(f float64) {
	s := strconv.FormatFloat(f, 'f', 17, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		s = "0"
	}
	if c.proto == 3 {
		c.out = append(append(append(c.out, ','), s...), '\r', '\n')
		return
	}
	c.BulkString(s)
}

// GEOADD key [NX|XX] [CH] longitude latitude member [...] is ZADD with
// the members' geohashes as scores, and is propagated as that ZADD.
func cmdGeoAdd(c *Client, argv [][]byte) {
	nx, xx := false, false
	longIdx := 2
options:
	for ; longIdx < len(argv); longIdx++ {
		switch {
		case eq(argv[longIdx], "nx"):
			nx = true
		case eq(argv[longIdx], "xx"):
			xx = true
		case eq(argv[longIdx], "ch"):
		default:
			break options
		}
	}
	if (len(argv)-longIdx)%3 != 0 || (xx && nx) {
		c.Error(ErrSyntax)
		return
	}
	elements := (len(argv) - longIdx) / 3
	zargv := make([][]byte, 0, longIdx+2*elements)
	zargv = append(zargv, []byte("zadd"))
	zargv = append(zargv, argv[1:longIdx]...)
	for i := 0; i < elements; i++ {
		at := longIdx + 3*i
		lon, lat, ok := c.parseLongLat(argv[at], argv[at+1])
		if !ok {
			return
		}
		h, _ := geohash.EncodeWGS84(lon, lat, geohash.StepMax)
		zargv = append(zargv, strconv.AppendUint(nil, geohash.Align52(h), 10), argv[at+2])
	}
	c.Propagate(zargv...)
	c.s.commands["zadd"].Handler(c, zargv) // ZADD's own handler, through the table
}

// GEODIST key member1 member2 [unit]
func cmdGeoDist(c *Client, argv [][]byte) {
	toMeter := 1.0
	if len(argv) == 5 {
		var ok bool
		if toMeter, ok = c.parseGeoUnit(argv[4]); !ok {
			return
		}
	} else if len(argv) > 5 {
		c.Error(ErrSyntax)
		return
	}
	o, ok := c.lookup(argv[1], store.KindZSet)
	if !ok {
		return
	}
	if o == nil {
		c.Null()
		return
	}
	s1, ok1 := o.ZSet.Score(string(argv[2]))
	s2, ok2 := o.ZSet.Score(string(argv[3]))
	if !ok1 || !ok2 {
		c.Null()
		return
	}
	lon1, lat1 := geohash.DecodeScore(s1)
	lon2, lat2 := geohash.DecodeScore(s2)
	c.BulkString(geoDistance(geohash.Distance(lon1, lat1, lon2, lat2) / toMeter))
}

// GEOHASH key [member ...]: 11-character standard geohashes (Redis
// decodes its own -85..85 hash and re-encodes over -90..90; the last
// character is always '0', as 52 bits give only 10).
func cmdGeoHash(c *Client, argv [][]byte) {
	const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"
	o, ok := c.lookup(argv[1], store.KindZSet)
	if !ok {
		return
	}
	c.Array(len(argv) - 2)
	for _, m := range argv[2:] {
		var score float64
		if o != nil {
			score, ok = o.ZSet.Score(string(m))
		}
		if o == nil || !ok {
			c.Null()
			continue
		}
		lon, lat := geohash.DecodeScore(score)
		r := geohash.StandardRanges
		h, _ := geohash.Encode(r[0], r[1], lon, lat, 26)
		var buf [11]byte
		for i := 0; i < 10; i++ {
			buf[i] = alphabet[(h.Bits>>(52-uint(i+1)*5))&0x1f]
		}
		buf[10] = alphabet[0]
		c.Bulk(buf[:])
	}
}

// GEOPOS key [member ...]
func cmdGeoPos(c *Client, argv [][]byte) {
	o, ok := c.lookup(argv[1], store.KindZSet)
	if !ok {
		return
	}
	c.Array(len(argv) - 2)
	for _, m := range argv[2:] {
		var score float64
		if o != nil {
			score, ok = o.ZSet.Score(string(m))
		}
		if o == nil || !ok {
			c.NullArray()
			continue
		}
		lon, lat := geohash.DecodeScore(score)
		c.Array(2)
		c.humanDouble(lon)
		c.humanDouble(lat)
	}
}

// The variants of georadiusGeneric.
const (
	geoFromCoords  = 1 << iota // GEORADIUS: center from longitude latitude
	geoFromMember              // GEORADIUSBYMEMBER: center from a member
	geoNoStore                 // the _RO variants: no STORE/STOREDIST
	geoSearch                  // GEOSEARCH's arguments
	geoSearchStore             // GEOSEARCHSTORE: destination first, STOREDIST a flag
)

const (
	geoSortNone = iota
	geoSortAsc
	geoSortDesc
)

// geoPoint is a search result (Redis's geoPoint).
type geoPoint struct {
	longitude, latitude, dist, score float64
	member                           string
}

func cmdGeoRadius(c *Client, argv [][]byte) { geoSearchGeneric(c, argv, 1, geoFromCoords) }
func cmdGeoRadiusByMember(c *Client, argv [][]byte) {
	geoSearchGeneric(c, argv, 1, geoFromMember)
}
func cmdGeoRadiusRO(c *Client, argv [][]byte) {
	geoSearchGeneric(c, argv, 1, geoFromCoords|geoNoStore)
}
func cmdGeoRadiusByMemberRO(c *Client, argv [][]byte) {
	geoSearchGeneric(c, argv, 1, geoFromMember|geoNoStore)
}
func cmdGeoSearch(c *Client, argv [][]byte) { geoSearchGeneric(c, argv, 1, geoSearch) }
func cmdGeoSearchStore(c *Client, argv [][]byte) {
	geoSearchGeneric(c, argv, 2, geoSearch|geoSearchStore)
}

// geoSearchGeneric is Redis's georadiusGeneric: GEORADIUS[BYMEMBER][_RO],
// GEOSEARCH and GEOSEARCHSTORE. Arguments are checked in Redis's order
// (the source key's type first, then each option as it comes), which
// decides which error a bad command gets.
func geoSearchGeneric(c *Client, argv [][]byte, srcIdx int, flags int) {
	var storeKey []byte
	storeDist := false
	zobj, ok := c.lookup(argv[srcIdx], store.KindZSet)
	if !ok {
		return
	}
	var shape geohash.Shape
	var base int
	switch {
	case flags&geoFromCoords != 0:
		base = 6
		if shape.Longitude, shape.Latitude, ok = c.parseLongLat(argv[2], argv[3]); !ok {
			return
		}
		if !c.parseGeoRadius(&shape, argv[4], argv[5]) {
			return
		}
	case flags&geoFromMember != 0 && zobj == nil:
		// Parse the options anyway: they decide between the replies for
		// a missing key.
		base = 5
	case flags&geoFromMember != 0:
		base = 5
		score, ok := zobj.ZSet.Score(string(argv[2]))
		if !ok {
			c.Error("ERR could not decode requested zset member")
			return
		}
		shape.Longitude, shape.Latitude = geohash.DecodeScore(score)
		if !c.parseGeoRadius(&shape, argv[3], argv[4]) {
			return
		}
	default: // geoSearch
		base = 2
		if flags&geoSearchStore != 0 {
			base = 3
			storeKey = argv[1]
		}
	}
	withDist, withHash, withCoord := false, false, false
	fromMember, fromLonLat, byRadius, byBox := false, false, false, false
	sortOrder := geoSortNone
	anyMatch := false
	var count int64
	rest := argv[base:]
	for i := 0; i < len(rest); i++ {
		arg := rest[i]
		more := len(rest) - 1 - i // arguments after this one
		search := flags&geoSearch != 0
		switch {
		case eq(arg, "withdist"):
			withDist = true
		case eq(arg, "withhash"):
			withHash = true
		case eq(arg, "withcoord"):
			withCoord = true
		case eq(arg, "any"):
			anyMatch = true
		case eq(arg, "asc"):
			sortOrder = geoSortAsc
		case eq(arg, "desc"):
			sortOrder = geoSortDesc
		case eq(arg, "count") && more >= 1:
			n, ok := parseInt(rest[i+1])
			if !ok {
				c.Error(ErrNotInt)
				return
			}
			if n <= 0 {
				c.Error("ERR COUNT must be > 0")
				return
			}
			count = n
			i++
		case (eq(arg, "store") || eq(arg, "storedist")) && more >= 1 && flags&(geoNoStore|geoSearch) == 0:
			storeKey, storeDist = rest[i+1], eq(arg, "storedist")
			i++
		case eq(arg, "storedist") && search && flags&geoSearchStore != 0:
			storeDist = true
		case eq(arg, "frommember") && more >= 1 && search && !fromLonLat:
			// Without a source key there is nothing to decode; the
			// options are still parsed.
			if zobj != nil {
				score, ok := zobj.ZSet.Score(string(rest[i+1]))
				if !ok {
					c.Error("ERR could not decode requested zset member")
					return
				}
				shape.Longitude, shape.Latitude = geohash.DecodeScore(score)
			}
			fromMember = true
			i++
		case eq(arg, "fromlonlat") && more >= 2 && search && !fromMember:
			if shape.Longitude, shape.Latitude, ok = c.parseLongLat(rest[i+1], rest[i+2]); !ok {
				return
			}
			fromLonLat = true
			i += 2
		case eq(arg, "byradius") && more >= 2 && search && !byBox:
			if !c.parseGeoRadius(&shape, rest[i+1], rest[i+2]) {
				return
			}
			shape.Box = false
			byRadius = true
			i += 2
		case eq(arg, "bybox") && more >= 3 && search && !byRadius:
			if !c.parseGeoBox(&shape, rest[i+1], rest[i+2], rest[i+3]) {
				return
			}
			shape.Box = true
			byBox = true
			i += 3
		default:
			c.Error(ErrSyntax)
			return
		}
	}
	if storeKey != nil && (withDist || withHash || withCoord) {
		what := "STORE option in GEORADIUS"
		if flags&geoSearchStore != 0 {
			what = "GEOSEARCHSTORE"
		}
		c.Error("ERR " + what + " is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		return
	}
	if flags&geoSearch != 0 && !fromMember && !fromLonLat {
		c.Error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + cstr(argv[0]))
		return
	}
	if flags&geoSearch != 0 && !byRadius && !byBox {
		c.Error("ERR exactly one of BYRADIUS and BYBOX can be specified for " + cstr(argv[0]))
		return
	}
	if anyMatch && count == 0 {
		c.Error("ERR the ANY argument requires COUNT argument")
		return
	}
	if storeKey != nil {
		c.untouched = srcIdx // WATCH sees only the destination modified
	}
	if zobj == nil {
		if storeKey != nil {
			if c.kv().Delete(storeKey) {
				c.s.dirty++
				c.notify(notifyGeneric, "del", storeKey)
			}
			c.Int(0)
		} else {
			c.Array(0)
		}
		return
	}
	// COUNT without ANY returns the nearest: sort ascending unless told.
	if count != 0 && sortOrder == geoSortNone && !anyMatch {
		sortOrder = geoSortAsc
	}
	var limit int64
	if anyMatch {
		limit = count
	}
	points := geoMembersInShape(zobj.ZSet, &shape, limit)
	if len(points) == 0 && storeKey == nil {
		c.Array(0)
		return
	}
	returned := len(points)
	if count != 0 && int64(returned) > count {
		returned = int(count)
	}
	if sortOrder != geoSortNone {
		geoSortPoints(points, returned, sortOrder == geoSortDesc)
	}
	points = points[:returned]
	for i := range points {
		points[i].dist /= shape.Conversion
	}
	if storeKey == nil {
		c.replyGeoPoints(points, withDist, withHash, withCoord)
		return
	}
	if returned == 0 {
		if c.kv().Delete(storeKey) {
			c.s.dirty++
			c.notify(notifyGeneric, "del", storeKey)
		}
		c.Int(0)
		return
	}
	res := store.NewObject(store.KindZSet)
	for _, p := range points {
		score := p.score
		if storeDist {
			score = p.dist
		}
		res.ZSet.Add(p.member, score)
		res.ZSetNote(p.member)
	}
	db := c.kv()
	db.Delete(storeKey)
	db.Add(storeKey, res)
	c.s.dirty += int64(returned)
	if c.cmd.Name == "geosearchstore" {
		c.notify(notifyZSet, "geosearchstore", storeKey)
	} else {
		c.notify(notifyZSet, "georadiusstore", storeKey)
	}
	c.Int(int64(returned))
}

// geoMembersInShape is membersOfAllNeighbors: the members of the cells the
// shape covers that lie inside it, cell by cell in Redis's order and by
// score within a cell; with limit > 0 (COUNT ANY) it stops once it has
// that many. A cell equal to the one processed just before is skipped (a
// huge radius makes neighbours coincide); the centre cell is never
// compared, as in Redis.
func geoMembersInShape(z *store.ZSet, shape *geohash.Shape, limit int64) []geoPoint {
	cells := shape.Cells()
	var out []geoPoint
	last := 0
	for i, cell := range cells {
		if cell.IsZero() {
			continue
		}
		if last != 0 && cell == cells[last] {
			continue
		}
		if len(out) > 0 && limit > 0 && int64(len(out)) >= limit {
			break
		}
		lo, hi := geohash.ScoreRange(cell)
		min, max := float64(lo), float64(hi)
		for r := z.FirstAtLeast(min, false); r < z.Len(); r++ {
			e := z.At(r)
			if e.Score >= max {
				break
			}
			lon, lat := geohash.DecodeScore(e.Score)
			if d, in := shape.Within(lon, lat); in {
				out = append(out, geoPoint{longitude: lon, latitude: lat, dist: d, score: e.Score, member: e.Member})
			}
			if len(out) > 0 && limit > 0 && int64(len(out)) >= limit {
				break
			}
		}
		last = i
	}
	return out
}

// geoSortPoints orders the results by distance as Redis does: all of them
// with libc's qsort, which is glibc's merge sort and so stable, or only
// the first n with Redis's partial quicksort (pqsort.c), whose order of
// equal distances is its own.
func geoSortPoints(points []geoPoint, n int, desc bool) {
	cmp := func(a, b *geoPoint) int {
		r := 0
		if a.dist > b.dist {
			r = 1
		} else if a.dist != b.dist {
			r = -1
		}
		if desc {
			r = -r
		}
		return r
	}
	if n == len(points) {
		slices.SortStableFunc(points, func(a, b geoPoint) int { return cmp(&a, &b) })
		return
	}
	pqsort(points, 0, len(points), cmp, 0, n-1)
}

// pqsort is Redis's pqsort.c (Bentley & McIlroy's quicksort that only
// recurses into the parts overlapping [lrange, rrange]) on points[base :
// base+n], step for step, so that equal keys end where Redis puts them.
func pqsort(a []geoPoint, base, n int, cmp func(a, b *geoPoint) int, lrange, rrange int) {
	swap := func(i, j int) { a[i], a[j] = a[j], a[i] }
	vecswap := func(i, j, n int) {
		for k := 0; k < n; k++ {
			swap(i+k, j+k)
		}
	}
	med3 := func(i, j, k int) int {
		if cmp(&a[i], &a[j]) < 0 {
			if cmp(&a[j], &a[k]) < 0 {
				return j
			}
			if cmp(&a[i], &a[k]) < 0 {
				return k
			}
			return i
		}
		if cmp(&a[j], &a[k]) > 0 {
			return j
		}
		if cmp(&a[i], &a[k]) < 0 {
			return i
		}
		return k
	}
	outside := func(start, cnt int) bool {
		end := start + cnt
		return (lrange < start && rrange < start) || (lrange >= end && rrange >= end)
	}
	for {
		if n < 7 {
			for pm := base + 1; pm < base+n; pm++ {
				for pl := pm; pl > base && cmp(&a[pl-1], &a[pl]) > 0; pl-- {
					swap(pl, pl-1)
				}
			}
			return
		}
		pm := base + n/2
		if n > 7 {
			pl, pn := base, base+n-1
			if n > 40 {
				d := n / 8
				pl = med3(pl, pl+d, pl+2*d)
				pm = med3(pm-d, pm, pm+d)
				pn = med3(pn-2*d, pn-d, pn)
			}
			pm = med3(pl, pm, pn)
		}
		swap(base, pm)
		pa, pb := base+1, base+1
		pc, pd := base+n-1, base+n-1
		for {
			for pb <= pc {
				r := cmp(&a[pb], &a[base])
				if r > 0 {
					break
				}
				if r == 0 {
					swap(pa, pb)
					pa++
				}
				pb++
			}
			for pb <= pc {
				r := cmp(&a[pc], &a[base])
				if r < 0 {
					break
				}
				if r == 0 {
					swap(pc, pd)
					pd--
				}
				pc--
			}
			if pb > pc {
				break
			}
			swap(pb, pc)
			pb++
			pc--
		}
		pn := base + n
		r := min(pa-base, pb-pa)
		vecswap(base, pb-r, r)
		r = min(pd-pc, pn-pd-1)
		vecswap(pb, pn-r, r)
		if r = pb - pa; r > 1 && !outside(base, r) {
			pqsort(a, base, r, cmp, lrange, rrange)
		}
		r = pd - pc
		if r <= 1 {
			return
		}
		base, n = pn-r, r
		if outside(base, n) {
			return
		}
	}
}

// replyGeoPoints replies search results: members, or per member an array
// of the member and the requested extras (distance, hash, coordinates).
func (c *Client) replyGeoPoints(points []geoPoint, withDist, withHash, withCoord bool) {
	extras := 0
	for _, on := range []bool{withDist, withHash, withCoord} {
		if on {
			extras++
		}
	}
	c.Array(len(points))
	for _, p := range points {
		if extras > 0 {
			c.Array(extras + 1)
		}
		c.BulkString(p.member)
		if withDist {
			c.BulkString(geoDistance(p.dist))
		}
		if withHash {
			c.Int(int64(p.score))
		}
		if withCoord {
			c.Array(2)
			c.humanDouble(p.longitude)
			c.humanDouble(p.latitude)
		}
	}
}

// geoStoreKeys are the keys of GEORADIUS[BYMEMBER] as Redis 7.0's key
// specs find them: the source, then the key after the first STORE and the
// key after the first STOREDIST, each searched from argument startFrom
// (the last argument is never taken for a keyword).
func geoStoreKeys(startFrom int) func(argv [][]byte) []int {
	return func(argv [][]byte) []int {
		keys := []int{1}
		for _, kw := range []string{"store", "storedist"} {
			for i := startFrom; i < len(argv)-1; i++ {
				if eq(argv[i], kw) {
					keys = append(keys, i+1)
					break
				}
			}
		}
		return keys
	}
}

// geoCommands are the geo family's specs.
func geoCommands() []*Command {
	geo := func(name string, arity int, flags Flag, first, last int, h Handler, summary, since string) *Command {
		return newCmd(name, arity, flags, first, last, 1, h, "geo").withDocs(summary, since)
	}
	const (
		radiusDoc = "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point"
		memberDoc = "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member"
		searchDoc = "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle."
	)
	return []*Command{
		geo("geoadd", -5, w, 1, 1, cmdGeoAdd,
			"Add one or more geospatial items in the geospatial index represented using a sorted set", "3.2.0"),
		geo("geodist", -4, ro, 1, 1, cmdGeoDist, "Returns the distance between two members of a geospatial index", "3.2.0"),
		geo("geohash", -2, ro, 1, 1, cmdGeoHash, "Returns members of a geospatial index as standard geohash strings", "3.2.0"),
		geo("geopos", -2, ro, 1, 1, cmdGeoPos, "Returns longitude and latitude of members of a geospatial index", "3.2.0"),
		geo("georadius", -6, w|FlagMovableKeys, 1, 1, cmdGeoRadius, radiusDoc, "3.2.0").
			withKeys(geoStoreKeys(6)).withRedisInfoSpecs(""),
		geo("georadius_ro", -6, ro, 1, 1, cmdGeoRadiusRO, "A read-only variant for GEORADIUS", "3.2.10"),
		geo("georadiusbymember", -5, w|FlagMovableKeys, 1, 1, cmdGeoRadiusByMember, memberDoc, "3.2.0").
			withKeys(geoStoreKeys(5)).withRedisInfoSpecs(""),
		geo("georadiusbymember_ro", -5, ro, 1, 1, cmdGeoRadiusByMemberRO, "A read-only variant for GEORADIUSBYMEMBER", "3.2.10"),
		geo("geosearch", -7, ro, 1, 1, cmdGeoSearch, searchDoc, "6.2.0"),
		geo("geosearchstore", -8, w, 1, 2, cmdGeoSearchStore,
			strings.TrimSuffix(searchDoc, ".")+", and store the result in another key.", "6.2.0").withRedisInfoSpecs(""),
	}
}
