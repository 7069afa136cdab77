package pricing

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrPriceSyntax marks a price that is not written as a plain decimal number.
var ErrPriceSyntax = errors.New("price is not a decimal number")

// ParsePrice reads a price written as providers and catalogs write one: a decimal number
// ("98.32", "-1", "1.5e2"), surrounding spaces allowed. strconv.ParseFloat alone also takes
// hexadecimal floats ("0x1p-2"), "inf", "nan" and digit underscores, none of which a price file
// means; they are refused here, as is a number too large for a float.
func ParsePrice(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if !decimal(t) {
		return 0, fmt.Errorf("%w: %q (write it like 12.5)", ErrPriceSyntax, s)
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is out of range", ErrPriceSyntax, s)
	}
	return f, nil
}

// decimal reports whether s is [+-]digits[.digits][e[+-]digits] with a digit before or after
// the point.
func decimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	int0 := i
	i = digits(s, i)
	mant := i - int0
	if i < len(s) && s[i] == '.' {
		j := digits(s, i+1)
		mant += j - i - 1
		i = j
	}
	if mant == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(s, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}
