package serving

import (
	"strings"
	"testing"
)

// The fuzz targets check that no input makes a parser panic and that what one accepts keeps its
// promises.

func FuzzParseDemand(f *testing.F) {
	f.Add(demandHead + "0,1,10,600\n1,2,20,120.5\n")
	f.Add(demandHead + "0,1,2,-3\n")
	f.Fuzz(func(t *testing.T, in string) {
		d, err := ParseDemand("f.csv", strings.NewReader(in))
		if err != nil {
			return
		}
		for m, v := range d.TokensPerS {
			if v < 0 || v != v {
				t.Fatalf("minute %d: accepted %v tokens/s", m, v)
			}
		}
	})
}

func FuzzParseProfile(f *testing.F) {
	f.Add(profileHead + "llama2-70b,h100-80gb,8,512,128,50,32,828.6\n")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := ParseProfile("f.csv", strings.NewReader(in), DefaultProfileQuery())
		if err != nil {
			return
		}
		for typ, tp := range p.Types {
			if !(tp.Rate > 0) {
				t.Fatalf("%s: accepted rate %v", typ, tp.Rate)
			}
		}
	})
}

func FuzzParseProbes(f *testing.F) {
	f.Add(probeHead + "r1,x,success,za,16,16,0\nr1,x,success,zb,16,7,9\nr2,x,success,za,16,8,8\nr2,x,success,zb,16,0,16\n")
	f.Fuzz(func(t *testing.T, in string) {
		c, err := ParseProbes("f.csv", strings.NewReader(in), "H100-80GB")
		if err != nil {
			return
		}
		for m, row := range c.GPUs {
			if len(row) != len(c.Zones) {
				t.Fatalf("minute %d: %d values for %d zones", m, len(row), len(c.Zones))
			}
		}
	})
}

func FuzzParseCatalog(f *testing.F) {
	f.Add(catalogHead + ",,,H100,8,,us-central1,us-central1-b,30,18\n")
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := ParseCatalog("f.csv", strings.NewReader(in))
		if err != nil {
			return
		}
		for _, r := range rows {
			if r.Price < 0 || r.Zone == "" {
				t.Fatalf("accepted %+v", r)
			}
		}
	})
}

func FuzzParseSpotQuote(f *testing.F) {
	f.Add([]byte(`{"region":"us-east4","machine_type":"a3-highgpu-8g","price":14.85}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		q, err := ParseSpotQuote("f.json", in)
		if err == nil && !(q.USDPerHour > 0) {
			t.Fatalf("accepted price %v", q.USDPerHour)
		}
	})
}
