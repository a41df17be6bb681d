package store

// ToSkiplist moves a sorted set out of the listpack encoding for good, as
// Redis's SORT does to any sorted set it reads (OBJECT ENCODING shows it).
func (o *Object) ToSkiplist() {
	if o.Kind == KindZSet {
		o.loose = true
	}
}
