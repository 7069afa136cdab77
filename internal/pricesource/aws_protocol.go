package pricesource

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// The AWS SDK reads a whole response into memory and then decodes it, and it takes a 200 whose
// body lacks the operation's response element (an HTML page, an error document, an empty
// body) for an empty answer. These wrappers of its protocol fix both where Bursar needs it.

// xmlRootCheck is a deserialize middleware for EC2 Query operations: it runs on the raw
// response before the SDK's decoder, and fails a 2xx body whose root element is not the
// operation's <NameResponse> as a decode error naming what came instead.
type xmlRootCheck struct{}

// addXMLRootCheck installs xmlRootCheck in an EC2 client's stack (ec2.Options.APIOptions).
func addXMLRootCheck(stack *middleware.Stack) error {
	return stack.Deserialize.Insert(xmlRootCheck{}, "OperationDeserializer", middleware.After)
}

func (xmlRootCheck) ID() string { return "BursarXMLRootCheck" }

func (xmlRootCheck) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (
	middleware.DeserializeOutput, middleware.Metadata, error) {
	out, md, err := next.HandleDeserialize(ctx, in)
	resp, ok := out.RawResponse.(*smithyhttp.Response)
	if err != nil || !ok || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return out, md, err
	}
	want := awsmiddleware.GetOperationName(ctx) + "Response"
	prefix, root, err := sniffXMLRoot(resp.Body)
	if err != nil {
		return out, md, &smithy.DeserializationError{Err: fmt.Errorf("want a %s XML document, got %w", want, err)}
	}
	if root != want {
		return out, md, &smithy.DeserializationError{Err: fmt.Errorf("want a %s XML document, got a <%s> document", want, root)}
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(prefix), resp.Body), resp.Body}
	return out, md, nil
}

// sniffXMLRoot reads r up to its root element and returns what it read (to be put back in
// front of the rest) and the root's local name. It reads at most 64 KiB looking.
func sniffXMLRoot(r io.Reader) ([]byte, string, error) {
	var seen bytes.Buffer
	dec := xml.NewDecoder(io.TeeReader(io.LimitReader(r, 64<<10), &seen))
	for {
		tok, err := dec.Token()
		switch {
		case errors.Is(err, io.EOF) && seen.Len() == 0:
			return nil, "", errors.New("an empty body")
		case errors.Is(err, io.EOF):
			return nil, "", errors.New("a body with no XML element in its first 64 KiB")
		case err != nil:
			if _, ok := transportKind(err); ok {
				return nil, "", err
			}
			return nil, "", fmt.Errorf("a body that is not XML (%w)", err)
		}
		if start, ok := tok.(xml.StartElement); ok {
			return seen.Bytes(), start.Name.Local, nil
		}
	}
}

// priceListShape is what a GetProducts answer must look like, for decode errors.
const priceListShape = "a GetProducts response (a JSON object with a PriceList array)"

// priceListStream wraps the AWS JSON 1.1 protocol for one GetProducts call: a 2xx body is
// decoded as it streams, each PriceList document handed to doc, and only NextToken is kept
// in the output, so a page is never held whole. Errors go to the SDK's own decoder.
type priceListStream struct {
	smithyhttp.ClientProtocol
	doc func(i int, doc string) error
}

// streamPriceList is the GetProducts option that installs priceListStream.
func streamPriceList(doc func(i int, doc string) error) func(*pricing.Options) {
	return func(o *pricing.Options) { o.Protocol = priceListStream{ClientProtocol: o.Protocol, doc: doc} }
}

func (p priceListStream) DeserializeResponse(ctx context.Context, schema *smithy.OperationSchema, types *smithy.TypeRegistry,
	resp *smithyhttp.Response, out smithy.Deserializable) error {
	o, ok := out.(*pricing.GetProductsOutput)
	if !ok || resp.StatusCode < 200 || resp.StatusCode > 299 {
		return p.ClientProtocol.DeserializeResponse(ctx, schema, types, resp, out)
	}
	next, err := parsePriceList(resp.Body, p.doc)
	if err != nil {
		return &smithy.DeserializationError{Err: err}
	}
	o.NextToken = aws.String(next)
	return nil
}

// parsePriceList decodes a GetProducts answer from r, handing each PriceList document (a JSON
// document sent as a string) to doc in turn, and returns NextToken.
func parsePriceList(r io.Reader, doc func(i int, doc string) error) (string, error) {
	var next string
	list := false
	dec := json.NewDecoder(r)
	seen, err := walkObject(dec, priceListShape, jsonFields{
		"NextToken": readString(&next),
		"PriceList": func(dec *json.Decoder) (err error) {
			list, err = walkArray(dec, func(i int, dec *json.Decoder) error {
				var s string
				if err := dec.Decode(&s); err != nil {
					return err
				}
				return doc(i, s)
			})
			return err
		},
	})
	if err != nil {
		return "", err
	}
	if !list {
		return "", missing(priceListShape, seen)
	}
	return next, nil
}
