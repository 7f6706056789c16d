use strict;
use warnings;
use Test::More tests => 7;

ok(1 + 1 == 2, 'addition');
is(lc('ABC'), 'abc', 'lower case');
is(2 * 3, 7, 'multiplication is wrong on purpose');
SKIP: {
    skip 'no network here', 1;
    ok(0, 'fetch a page');
}
TODO: {
    local $TODO = 'not written yet';
    ok(0, 'parse dates');
}
like('hello world', qr/world/, 'a # in a name \# is kept');
cmp_ok(10, '<', 3, 'ten is less than three');
