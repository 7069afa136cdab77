//go:build e2e

package helm_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"helm.sh/helm/v4/pkg/strvals"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// renderDocs renders the chart as the docs' install does, with extra values files from testdata
// after the docs' own -f files (as a user's further -f would be) and the docs' --set on top, as
// helm orders them. It returns every object, unstructured.
func renderDocs(t testing.TB, in docsInstall, extra ...string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := tryRenderDocs(in, extra...)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func tryRenderDocs(in docsInstall, extra ...string) ([]*unstructured.Unstructured, error) {
	vals := map[string]any{}
	for _, f := range append(slices.Clone(in.files), extra...) {
		var v common.Values
		var err error
		if body, ok := in.bodies[f]; ok {
			v, err = common.ReadValues([]byte(body))
		} else {
			v, err = common.ReadValuesFile(filepath.Join("testdata", filepath.Base(f)))
		}
		if err != nil {
			return nil, fmt.Errorf("the install takes -f %s: %w (the page gives it in a YAML block before the install, or testdata/%s holds what a user would put there)",
				f, err, filepath.Base(f))
		}
		vals = util.MergeTables(v.AsMap(), vals)
	}
	for _, k := range in.drop {
		delete(vals, k)
	}
	for _, s := range in.sets {
		if err := strvals.ParseInto(s, vals); err != nil {
			return nil, fmt.Errorf("--set %s: %w", s, err)
		}
	}
	ch, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	rv, err := util.ToRenderValues(ch, vals, common.ReleaseOptions{Name: "bursar", Namespace: in.namespace, IsInstall: true},
		common.DefaultCapabilities)
	if err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	files, err := engine.Render(ch, rv)
	if err != nil {
		return nil, fmt.Errorf("rendering: %w", err)
	}
	var objs []*unstructured.Unstructured
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for i, doc := range strings.Split(files[name], "\n---") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				return nil, fmt.Errorf("%s#%d: %w", name, i, err)
			}
			if len(m) == 0 {
				continue
			}
			u := &unstructured.Unstructured{Object: m}
			if u.GetNamespace() == "" && namespaced(u.GetKind()) {
				u.SetNamespace(in.namespace) // helm install --namespace
			}
			objs = append(objs, u)
		}
	}
	return objs, nil
}

// namespaced reports whether the chart's kind lives in a namespace.
func namespaced(kind string) bool {
	return kind != "ClusterRole" && kind != "ClusterRoleBinding" && kind != "Namespace"
}
