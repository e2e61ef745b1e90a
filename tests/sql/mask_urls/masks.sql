-- mask_urls (internal): the one URL mask of every free text the product stores - each
-- scheme://... replaced by <url>, the text trimmed and cut to p_max; NULL stays NULL.
begin;
select plan(8);

select is(
    recording_finalize_internal.mask_urls(
        'GET https://b.s3.amazonaws.com/k?X-Amz-Signature=dead&X-Amz-Credential=AKIA timed out',
        400),
    'GET <url> timed out',
    'a presigned URL is masked whole, up to the next white space'
);
select is(
    recording_finalize_internal.mask_urls('s3://b/k and http://user:secret@10.0.0.1:8333/x', 400),
    '<url> and <url>',
    'every URL, any scheme, credentials included'
);
select is(
    recording_finalize_internal.mask_urls('see git+ssh://h/r, then X://y', 400),
    'see <url> then <url>',
    'schemes with + and single letters; the URL runs to the next white space'
);
select is(
    recording_finalize_internal.mask_urls('one a://-less, none 1http//x or 9s3://y', 400),
    'one <url> none 1http//x or 9<url>',
    'a scheme is a letter then letters, digits, + . -: what has none is left alone'
);
select is(recording_finalize_internal.mask_urls('  padded  ', 400), 'padded', 'trimmed');
select is(length(recording_finalize_internal.mask_urls(repeat('e', 5000), 400)), 400,
    'cut to p_max characters');
select is(
    recording_finalize_internal.mask_urls('x https://' || repeat('k', 600), 10),
    'x <url>', 'masked before it is cut (no half URL survives the cut)'
);
select is(recording_finalize_internal.mask_urls(null, 400), null, 'NULL stays NULL');

select * from finish();
rollback;
