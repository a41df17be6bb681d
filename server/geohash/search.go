package geohash

import "math"

// Redis's constants (geohash_helper.c). dR is computed at run time, as C
// divides the double M_PI by 180, not the exact π.
var (
	pi = math.Pi
	dR = pi / 180.0
)

const (
	// EarthRadius is Earth's quadratic mean radius for WGS-84, in meters.
	EarthRadius = 6372797.560856
	mercatorMax = 20037726.37
)

func degRad(ang float64) float64 { return ang * dR }
func radDeg(ang float64) float64 { return ang / dR }

// Shape is a search area: a circle of Radius or a box of Width x Height
// around (Longitude, Latitude), the sizes in a unit of Conversion meters.
type Shape struct {
	Longitude, Latitude float64
	Box                 bool
	Radius              float64
	Width, Height       float64
	Conversion          float64
}

// bounds is geohashBoundingBox: min longitude, min latitude, max
// longitude, max latitude. Longitudes are not wrapped at ±180.
func (s *Shape) bounds() [4]float64 {
	height, width := s.Radius, s.Radius
	if s.Box {
		height, width = s.Height/2, s.Width/2
	}
	height *= s.Conversion
	width *= s.Conversion
	latDelta := radDeg(height / EarthRadius)
	longDeltaTop := radDeg(width / EarthRadius / cos(degRad(s.Latitude+latDelta)))
	longDeltaBottom := radDeg(width / EarthRadius / cos(degRad(s.Latitude-latDelta)))
	// Northern and southern hemispheres take their widest edge from
	// opposite sides of the box.
	longDelta := longDeltaTop
	if s.Latitude < 0 {
		longDelta = longDeltaBottom
	}
	return [4]float64{s.Longitude - longDelta, s.Latitude - latDelta, s.Longitude + longDelta, s.Latitude + latDelta}
}

// estimateSteps is geohashEstimateStepsByRadius: the step of the cells a
// search of rangeMeters around latitude lat visits.
func estimateSteps(rangeMeters, lat float64) uint8 {
	if rangeMeters == 0 {
		return 26
	}
	step := 1
	for rangeMeters < mercatorMax {
		rangeMeters *= 2
		step++
	}
	step -= 2 // make sure the range is included in most of the base cases
	// Wider cells towards the poles.
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint8(min(max(step, 1), 26))
}

// Cells are the cells a search visits, in Redis's order: the centre's,
// then north, south, east, west, north-east, north-west, south-east,
// south-west; a zero Bits is a neighbour the search leaves out.
func (s *Shape) Cells() [9]Bits {
	b := s.bounds()
	minLon, minLat, maxLon, maxLat := b[0], b[1], b[2], b[3]
	radius := s.Radius
	if s.Box {
		radius = math.Sqrt(float64(s.Width/2*(s.Width/2)) + float64(s.Height/2*(s.Height/2)))
	}
	radius *= s.Conversion
	steps := estimateSteps(radius, s.Latitude)
	cell := func(steps uint8) (Bits, Neighbors, Area) {
		h, _ := Encode(longRange, latRange, s.Longitude, s.Latitude, steps)
		a, _ := Decode(longRange, latRange, h)
		return h, neighbors(h), a
	}
	h, n, area := cell(steps)
	// Near an edge of the centre cell the estimated step may leave a
	// neighbour too narrow to cover the search: one step coarser then.
	north, _ := Decode(longRange, latRange, n.North)
	south, _ := Decode(longRange, latRange, n.South)
	east, _ := Decode(longRange, latRange, n.East)
	west, _ := Decode(longRange, latRange, n.West)
	decrease := north.Latitude.Max < maxLat || south.Latitude.Min > minLat ||
		east.Longitude.Max < maxLon || west.Longitude.Min > minLon
	if steps > 1 && decrease {
		steps--
		h, n, area = cell(steps)
	}
	// Leave out the neighbours the search cannot reach.
	if steps >= 2 {
		if area.Latitude.Min < minLat {
			n.South, n.SouthWest, n.SouthEast = Bits{}, Bits{}, Bits{}
		}
		if area.Latitude.Max > maxLat {
			n.North, n.NorthEast, n.NorthWest = Bits{}, Bits{}, Bits{}
		}
		if area.Longitude.Min < minLon {
			n.West, n.SouthWest, n.NorthWest = Bits{}, Bits{}, Bits{}
		}
		if area.Longitude.Max > maxLon {
			n.East, n.SouthEast, n.NorthEast = Bits{}, Bits{}, Bits{}
		}
	}
	return [9]Bits{h, n.North, n.South, n.East, n.West, n.NorthEast, n.NorthWest, n.SouthEast, n.SouthWest}
}

// ScoreRange is scoresOfGeoHashBox: the scores [min, max) of the
// positions inside cell h.
func ScoreRange(h Bits) (lo, hi uint64) {
	lo = Align52(h)
	h.Bits++
	return lo, Align52(h)
}

// latDistance is geohashGetLatDistance: the distance along a meridian.
func latDistance(lat1d, lat2d float64) float64 {
	return EarthRadius * math.Abs(degRad(lat2d)-degRad(lat1d))
}

// Distance is geohashGetDistance: the haversine great-circle distance in
// meters.
func Distance(lon1d, lat1d, lon2d, lat2d float64) float64 {
	lon1r := degRad(lon1d)
	lon2r := degRad(lon2d)
	v := sin((lon2r - lon1r) / 2)
	// Same longitude: the haversine reduces to the latitude difference.
	if v == 0.0 {
		return latDistance(lat1d, lat2d)
	}
	lat1r := degRad(lat1d)
	lat2r := degRad(lat2d)
	u := sin((lat2r - lat1r) / 2)
	a := float64(u*u) + float64(cos(lat1r)*cos(lat2r)*v*v)
	return 2.0 * EarthRadius * asin(math.Sqrt(a))
}

// Within is geoWithinShape after decoding: whether the position is in the
// shape, and its distance from the shape's centre in meters.
func (s *Shape) Within(longitude, latitude float64) (float64, bool) {
	if !s.Box {
		d := Distance(s.Longitude, s.Latitude, longitude, latitude)
		return d, d <= s.Radius*s.Conversion
	}
	// geohashGetDistanceIfInRectangle: latitude first, it is cheaper.
	width, height := s.Width*s.Conversion, s.Height*s.Conversion
	if latDistance(latitude, s.Latitude) > height/2 {
		return 0, false
	}
	if Distance(longitude, latitude, s.Longitude, latitude) > width/2 {
		return 0, false
	}
	return Distance(s.Longitude, s.Latitude, longitude, latitude), true
}
