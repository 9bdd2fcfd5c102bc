package accuracy

import (
	"os"
	"testing"

	"github.com/neardup/neardup/internal/evaldata"
)

// TestMain says how many tests were skipped for want of the evaluation data.
func TestMain(m *testing.M) { os.Exit(evaldata.Main(m)) }
