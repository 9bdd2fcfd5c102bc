// Package api holds neardup's value types: what a caller gives (Document, Query) and what
// it gets back (Verdict, Match, Kind, Level, Fingerprints, Hash), with their JSON forms,
// and what a neardup.Detector keeps of a document (Entry, with its frozen binary form)
// and compares to choose a survivor (Candidate).
//
// It is a leaf: it imports nothing heavier than package minhash (for the Signature type,
// a slice of integers, and its small encoder), so that a program that only talks to the
// service (package client) carries no extractor, index or storage engine.
//
// The root package neardup declares every name here as an alias (neardup.Verdict is
// api.Verdict), so code written against neardup needs no change and either spelling
// names the same type.
package api
