package storetest

// fileTests are the tests of files (SPEC §7.1, §9).
var fileTests = []suiteTest{}
