package timetable

// Civil (wall-clock) arithmetic without time.Location. A wall time is held as
// "wall seconds": the seconds since 1970-01-01T00:00:00 of the proleptic
// Gregorian calendar, read as if it were UTC. Converting wall seconds to an
// instant needs a zone; that is zone.go's job. Keeping the two apart is what
// lets the engine see gaps and repeats instead of letting time.Date guess.

const (
	secondsPerDay = 86400
	// maxWall is 9999-12-31T23:59:59 in wall seconds: nothing is computed past
	// it, because RFC 3339 and encoding/json cannot express year 10000.
	maxWall = 253402300799
	// lastEvery is the last unix second an every schedule fires at: its
	// wall time must stay within maxWall in every zone, and offsets reach
	// +14h.
	lastEvery = maxWall - 14*3600
	// minWall is 0001-01-01T00:00:00 in wall seconds.
	minWall = -62135596800
)

// daysFromCivil returns the day number (days since 1970-01-01) of y-m-d.
// Howard Hinnant's algorithm; valid for every proleptic Gregorian date.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y, m, d int) {
	z += 719468
	era := z
	if era < 0 {
		era -= 146096
	}
	era /= 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = int(yoe + era*400)
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// daysIn returns the number of days in month m of year y.
func daysIn(y, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// weekdayOf returns the day of week of a day number, 0 = Sunday.
func weekdayOf(days int64) int {
	w := (days + 4) % 7 // 1970-01-01 was a Thursday
	if w < 0 {
		w += 7
	}
	return int(w)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// splitWall breaks wall seconds into calendar fields.
func splitWall(w int64) (y, mo, d, h, mi, s int) {
	days := floorDiv(w, secondsPerDay)
	sod := int(w - days*secondsPerDay)
	y, mo, d = civilFromDays(days)
	return y, mo, d, sod / 3600, sod / 60 % 60, sod % 60
}

// joinWall is the inverse of splitWall.
func joinWall(y, mo, d, h, mi, s int) int64 {
	return daysFromCivil(y, mo, d)*secondsPerDay + int64(h*3600+mi*60+s)
}
