package store

import (
	"context"
	"errors"
	"io"
	"net"
	"regexp"
	"strconv"
	"syscall"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/bursar-dev/bursar/internal/store/chdb"
)

// Error is an error ClickHouse reported for a statement, from either engine.
type Error struct {
	Code    int    // ClickHouse's exception code (e.g. 60 UNKNOWN_TABLE); 0 when unknown
	Message string // as the engine wrote it
}

func (e *Error) Error() string {
	if e.Code != 0 {
		return "clickhouse: code " + strconv.Itoa(e.Code) + ": " + e.Message
	}
	return "clickhouse: " + e.Message
}

// ErrUnavailable wraps failures to reach ClickHouse at all: refused or dropped connections,
// timeouts. They go away when the server comes back.
var ErrUnavailable = errors.New("clickhouse unavailable")

// transientCodes are ClickHouse exception codes that a retry can fix: overload, timeouts,
// replication and Keeper trouble.
var transientCodes = map[int]bool{
	159: true, // TIMEOUT_EXCEEDED
	202: true, // TOO_MANY_SIMULTANEOUS_QUERIES
	203: true, // NO_FREE_CONNECTION
	209: true, // SOCKET_TIMEOUT
	210: true, // NETWORK_ERROR
	225: true, // NO_ZOOKEEPER
	241: true, // MEMORY_LIMIT_EXCEEDED
	242: true, // TABLE_IS_READ_ONLY
	252: true, // TOO_MANY_PARTS
	285: true, // TOO_FEW_LIVE_REPLICAS
	319: true, // UNKNOWN_STATUS_OF_INSERT
	425: true, // SYSTEM_ERROR
	999: true, // KEEPER_EXCEPTION
}

// Transient reports whether retrying the same statement later may succeed: ClickHouse is down,
// slow or overloaded, as opposed to rejecting the statement itself.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ce *Error
	if errors.As(err, &ce) {
		return transientCodes[ce.Code]
	}
	return false
}

// refusedCodes are ClickHouse exception codes that say the rows of an insert cannot be stored as
// they are: a value the column's type cannot read or hold, or one a table constraint forbids. The
// same rows are refused again however often they are sent, and the other rows of the insert are
// not at fault. Failures of the statement itself (a syntax error, an unknown table or column: a
// schema that does not match the binary) are not here: they fail every row alike, and the
// recorder must hold, not dead-letter its whole stream.
var refusedCodes = map[int]bool{
	6:   true, // CANNOT_PARSE_TEXT
	26:  true, // CANNOT_PARSE_QUOTED_STRING
	27:  true, // CANNOT_PARSE_INPUT_ASSERTION_FAILED
	38:  true, // CANNOT_PARSE_DATE
	41:  true, // CANNOT_PARSE_DATETIME
	53:  true, // TYPE_MISMATCH
	69:  true, // ARGUMENT_OUT_OF_BOUND
	70:  true, // CANNOT_CONVERT_TYPE
	72:  true, // CANNOT_PARSE_NUMBER
	117: true, // INCORRECT_DATA
	131: true, // TOO_LARGE_STRING_SIZE
	321: true, // VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE
	349: true, // CANNOT_INSERT_NULL_IN_ORDINARY_COLUMN
	407: true, // DECIMAL_OVERFLOW
	469: true, // VIOLATED_CONSTRAINT
	691: true, // UNKNOWN_ELEMENT_OF_ENUM
}

// Refused reports whether ClickHouse refused the data of a statement, not the statement or its
// own state: retrying the same rows can never succeed, and rows without the bad ones may. Only
// the codes above count; every other failure, a store that is down or one the engine does not
// explain (no code) included, may pass and is not Refused.
func Refused(err error) bool {
	var ce *Error
	return errors.As(err, &ce) && refusedCodes[ce.Code]
}

var codeRE = regexp.MustCompile(`^Code: (\d+)\. `)

// wrapEngineError turns engine-specific errors into *Error or ErrUnavailable.
func wrapEngineError(err error) error {
	if err == nil {
		return nil
	}
	var qe *chdb.QueryError
	if errors.As(err, &qe) {
		e := &Error{Message: qe.Message}
		if m := codeRE.FindStringSubmatch(qe.Message); m != nil {
			e.Code, _ = strconv.Atoi(m[1])
		}
		return e
	}
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		return &Error{Code: int(ex.Code), Message: ex.Message}
	}
	if isNetwork(err) {
		return errors.Join(ErrUnavailable, err)
	}
	return err
}

func isNetwork(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}
