-- DBT-1 data generator: deterministic server-side SQL. Every value is computed from the row
-- number (md5-based hashes), never from random() or the clock, so loading the same scale through
-- one connection produces identical tables at every replica, whether each replica runs it
-- (symmetric execution through a proxy) or it is loaded directly.
-- The loader calls dbt1_load_TABLE(...) one table at a time, in the order of this file.

-- Hash of (salt, n): 60 bits of md5, non-negative. Different salts give independent columns.
CREATE OR REPLACE FUNCTION dbt1_hash(p_salt int, p_n bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ('x' || substr(md5(p_salt::text || ':' || p_n::text), 1, 15))::bit(60)::bigint $$;

-- TPC-W's DigSyl: one syllable per decimal digit (the client mirrors it in DigSyl.java to log in
-- as customers and to search authors and titles). The syllables contain no digits, so the order
-- of the replacements does not matter.
CREATE OR REPLACE FUNCTION digsyl(p_n bigint) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(p_n::text,
        '0', 'BA'), '1', 'OG'), '2', 'AL'), '3', 'RI'), '4', 'RE'), '5', 'SE'), '6', 'AT'), '7', 'UL'), '8', 'IN'), '9', 'NG') $$;

-- An integer in [p_lo, p_hi] picked by the hash.
CREATE OR REPLACE FUNCTION dbt1_pick(p_salt int, p_n bigint, p_lo bigint, p_hi bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT p_lo + dbt1_hash(p_salt, p_n) % (p_hi - p_lo + 1) $$;

-- TPC-W's "a-string": letters, length in [p_min, p_max] picked by the hash.
CREATE OR REPLACE FUNCTION dbt1_astring(p_salt int, p_n bigint, p_min int, p_max int) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT substr(repeat(translate(md5('a' || p_salt::text || ':' || p_n::text), '0123456789', 'qrstuvwxyz'), p_max / 32 + 1),
                    1, dbt1_pick(p_salt + 7919, p_n, p_min, p_max)::int) $$;

-- TPC-W's "n-string": digits, length in [p_min, p_max].
CREATE OR REPLACE FUNCTION dbt1_nstring(p_salt int, p_n bigint, p_min int, p_max int) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT substr(repeat(lpad((dbt1_hash(p_salt, p_n) % 1000000000000000)::text, 15, '0'), p_max / 15 + 1),
                    1, dbt1_pick(p_salt + 7919, p_n, p_min, p_max)::int) $$;

-- One of p_values, picked by the hash.
CREATE OR REPLACE FUNCTION dbt1_choice(p_salt int, p_n bigint, p_values text[]) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT p_values[1 + dbt1_hash(p_salt, p_n) % cardinality(p_values)] $$;

-- The 24 TPC-W subjects (the client draws search and best-seller subjects from the same list).
CREATE OR REPLACE FUNCTION dbt1_subjects() RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT ARRAY['ARTS','BIOGRAPHIES','BUSINESS','CHILDREN','COMPUTERS','COOKING','HEALTH','HISTORY',
                   'HOME','HUMOR','LITERATURE','MYSTERY','NON-FICTION','PARENTING','POLITICS','REFERENCE',
                   'RELIGION','ROMANCE','SELF-HELP','SCIENCE-NATURE','SCIENCE-FICTION','SPORTS','YOUTH','TRAVEL'] $$;

-- The instant the data set describes: a constant, so the load never reads the clock.
CREATE OR REPLACE FUNCTION dbt1_epoch() RETURNS timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$ SELECT timestamptz '2024-01-01 00:00:00+00' $$;

CREATE OR REPLACE FUNCTION dbt1_load_country() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    INSERT INTO country (co_id, co_name, co_exchange, co_currency)
    SELECT c.ord, c.name, round(0.5 + dbt1_hash(1, c.ord) % 200000 / 1000.0, 6), c.currency
    FROM unnest(
        ARRAY['United States','United Kingdom','Canada','Germany','France','Japan','Netherlands','Italy',
              'Switzerland','Australia','Algeria','Argentina','Armenia','Austria','Azerbaijan','Bahamas',
              'Bahrain','Bangladesh','Barbados','Belarus','Belgium','Bermuda','Bolivia','Botswana',
              'Brazil','Bulgaria','Cayman Islands','Chad','Chile','China','Christmas Island','Colombia',
              'Croatia','Cuba','Cyprus','Czech Republic','Denmark','Dominican Republic','Eastern Caribbean','Ecuador',
              'Egypt','El Salvador','Estonia','Ethiopia','Falkland Islands','Faroe Islands','Fiji','Finland',
              'Gabon','Gibraltar','Greece','Guam','Hong Kong','Hungary','Iceland','India',
              'Indonesia','Iran','Iraq','Ireland','Israel','Jamaica','Jordan','Kazakhstan',
              'Kuwait','Lebanon','Luxembourg','Malaysia','Mexico','Mauritius','New Zealand','Norway',
              'Pakistan','Philippines','Poland','Portugal','Romania','Russia','Saudi Arabia','Singapore',
              'Slovakia','South Africa','South Korea','Spain','Sudan','Sweden','Taiwan','Thailand',
              'Trinidad','Turkey','Venezuela','Zambia'],
        ARRAY['Dollars','Pounds','Dollars','Euro','Euro','Yen','Euro','Euro',
              'Francs','Dollars','Dinars','Pesos','Dram','Euro','Manat','Dollars',
              'Dinar','Taka','Dollars','Rouble','Euro','Dollars','Boliviano','Pula',
              'Real','Lev','Dollars','Franc','Pesos','Yuan Renmimbi','Dollars','Pesos',
              'Kuna','Pesos','Pounds','Koruna','Kroner','Pesos','Dollars','Sucre',
              'Pounds','Colones','Kroon','Birr','Pound','Krone','Dollars','Euro',
              'Franc','Pound','Euro','Dollars','Dollars','Forint','Krona','Rupees',
              'Rupiah','Rial','Dinar','Euro','Shekels','Dollars','Dinar','Tenge',
              'Dinar','Pounds','Euro','Ringgit','Pesos','Rupees','Dollars','Kroner',
              'Rupees','Pesos','Zloty','Euro','Leu','Rubles','Riyal','Dollars',
              'Koruna','Rand','Won','Euro','Dinar','Krona','Dollars','Baht',
              'Dollars','Lira','Bolivar','Kwacha']) WITH ORDINALITY AS c(name, currency, ord);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;

-- DigSyl-named authors: a_lname = digsyl(a_id), which the client's author searches draw from.
CREATE OR REPLACE FUNCTION dbt1_load_author(p_authors int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    INSERT INTO author (a_id, a_fname, a_lname, a_mname, a_dob, a_bio)
    SELECT a, dbt1_astring(10, a, 3, 20), digsyl(a), dbt1_astring(11, a, 1, 20),
           date '1800-01-01' + dbt1_pick(12, a, 0, 73000)::int, dbt1_astring(13, a, 125, 500)
    FROM generate_series(1, p_authors) a;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;

-- Items: the first p_authors items have author i_id (every author wrote one), the rest a hashed
-- one; titles start with digsyl of a hashed item number, which the client's title searches draw from;
-- five distinct related items other than the item itself.
CREATE OR REPLACE FUNCTION dbt1_load_item(p_items int, p_authors int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    INSERT INTO item (i_id, i_title, i_a_id, i_pub_date, i_publisher, i_subject, i_desc,
                      i_related1, i_related2, i_related3, i_related4, i_related5,
                      i_thumbnail, i_image, i_srp, i_cost, i_avail, i_stock, i_isbn, i_page, i_backing, i_dimensions)
    SELECT i, left(digsyl(dbt1_pick(20, i, 1, p_items)) || ' ' || dbt1_astring(21, i, 8, 40), 60),
           CASE WHEN i <= p_authors THEN i ELSE dbt1_pick(22, i, 1, p_authors)::int END,
           pub, dbt1_astring(23, i, 14, 60), dbt1_choice(24, i, dbt1_subjects()), dbt1_astring(25, i, 100, 500),
           1 + (i + 1 * step) % p_items, 1 + (i + 2 * step) % p_items, 1 + (i + 3 * step) % p_items,
           1 + (i + 4 * step) % p_items, 1 + (i + 5 * step) % p_items,
           'img' || i % 100 || '/thumb_' || i || '.gif', 'img' || i % 100 || '/image_' || i || '.gif',
           srp, round(srp * (1 - dbt1_pick(27, i, 0, 50) / 100.0), 2),
           pub + dbt1_pick(28, i, 1, 30)::int, dbt1_pick(29, i, 10, 30)::int, dbt1_nstring(30, i, 13, 13),
           dbt1_pick(31, i, 20, 9999)::int, dbt1_choice(32, i, ARRAY['HARDBACK','PAPERBACK','USED','AUDIO','LIMITED-EDITION']),
           dbt1_pick(33, i, 1, 99) || '.' || dbt1_pick(34, i, 1, 99) || 'x' || dbt1_pick(35, i, 1, 99) || '.' || dbt1_pick(36, i, 1, 99)
               || 'x' || dbt1_pick(37, i, 1, 99) || '.' || dbt1_pick(38, i, 1, 99)
    FROM generate_series(1, p_items) i,
         LATERAL (SELECT date '1930-01-01' + dbt1_pick(26, i, 0, 25000)::int AS pub,
                         round(dbt1_pick(39, i, 100, 999999) / 100.0, 2) AS srp,
                         -- step <= (items-1)/5 keeps i+step .. i+5*step distinct and different from i
                         dbt1_pick(40, i, 1, greatest((p_items - 1) / 5, 1)) AS step) x;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;

CREATE OR REPLACE FUNCTION dbt1_load_address(p_addresses int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    INSERT INTO address (addr_id, addr_street1, addr_street2, addr_city, addr_state, addr_zip, addr_co_id)
    SELECT a, dbt1_astring(50, a, 15, 40), dbt1_astring(51, a, 15, 40), dbt1_astring(52, a, 4, 30),
           dbt1_astring(53, a, 2, 20), dbt1_astring(54, a, 5, 10), dbt1_pick(55, a, 1, 92)::int
    FROM generate_series(1, p_addresses) a;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;

-- Customers: c_uname = digsyl(c_id), c_passwd = lower(c_uname) (TPC-W), so the client can log in
-- as any customer it draws.
CREATE OR REPLACE FUNCTION dbt1_load_customer(p_customers int, p_addresses int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    INSERT INTO customer (c_id, c_uname, c_passwd, c_fname, c_lname, c_addr_id, c_phone, c_email, c_since,
                          c_last_visit, c_login, c_expiration, c_discount, c_balance, c_ytd_pmt, c_birthdate, c_data)
    SELECT c, digsyl(c), lower(digsyl(c)), dbt1_astring(60, c, 8, 15), dbt1_astring(61, c, 8, 15),
           dbt1_pick(62, c, 1, p_addresses)::int, dbt1_nstring(63, c, 9, 16),
           digsyl(c) || '@' || dbt1_choice(64, c, ARRAY['example.com','example.net','example.org','mail.test','shop.test']),
           since, since + dbt1_pick(66, c, 0, 60)::int, login, login + interval '2 hours',
           dbt1_pick(67, c, 0, 50) / 100.0, 0, dbt1_pick(68, c, 0, 99999) / 100.0,
           date '1880-01-01' + dbt1_pick(69, c, 0, 45000)::int, dbt1_astring(70, c, 100, 500)
    FROM generate_series(1, p_customers) c,
         LATERAL (SELECT date '2024-01-01' - dbt1_pick(65, c, 1, 730)::int AS since,
                         dbt1_epoch() - dbt1_pick(71, c, 0, 86400 * 30) * interval '1 second' AS login) x;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;

-- 1 to 5 lines per order (TPC-W).
CREATE OR REPLACE FUNCTION dbt1_load_order_line(p_orders int, p_items int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    INSERT INTO order_line (ol_o_id, ol_id, ol_i_id, ol_qty, ol_discount, ol_comments)
    SELECT o, l, dbt1_pick(80, o * 8 + l, 1, p_items)::int, dbt1_pick(81, o * 8 + l, 1, 300)::int,
           dbt1_pick(82, o * 8 + l, 0, 3) / 100.0, dbt1_astring(83, o * 8 + l, 20, 100)
    FROM generate_series(1, p_orders) o, generate_series(1, dbt1_pick(84, o, 1, 5)::int) l;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;

-- Orders carry the totals of their lines: subtotal at the items' cost less the line discount,
-- 8.25% tax, shipping 3.00 + 1.00 per unit (the same rules as buy_confirm).
CREATE OR REPLACE FUNCTION dbt1_load_orders(p_orders int, p_customers int, p_addresses int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    INSERT INTO orders (o_id, o_c_id, o_date, o_sub_total, o_tax, o_total, o_ship_type, o_ship_date,
                        o_bill_addr_id, o_ship_addr_id, o_status)
    SELECT t.o, cust, odate, t.sub, round(t.sub * 0.0825, 2), t.sub + round(t.sub * 0.0825, 2) + 3.00 + t.units,
           dbt1_choice(91, t.o, ARRAY['AIR','UPS','FEDEX','SHIP','COURIER','MAIL']),
           odate + dbt1_pick(92, t.o, 1, 7) * interval '24 hours', c.c_addr_id, dbt1_pick(93, t.o, 1, p_addresses)::int,
           dbt1_choice(94, t.o, ARRAY['PROCESSING','SHIPPED','PENDING','DENIED'])
    FROM (SELECT ol_o_id AS o, round(sum(i_cost * ol_qty * (1 - ol_discount)), 2) AS sub, sum(ol_qty) AS units
          FROM order_line JOIN item ON i_id = ol_i_id
          WHERE ol_o_id <= p_orders
          GROUP BY ol_o_id) t,
         LATERAL (SELECT dbt1_pick(90, t.o, 1, p_customers)::int AS cust,
                         dbt1_epoch() - dbt1_pick(95, t.o, 0, 86400 * 60) * interval '1 second' AS odate) x
         JOIN customer c ON c.c_id = x.cust;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;

-- One credit-card transaction per order, for its total.
CREATE OR REPLACE FUNCTION dbt1_load_cc_xacts() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    INSERT INTO cc_xacts (cx_o_id, cx_type, cx_num, cx_name, cx_expiry, cx_auth_id, cx_xact_amt, cx_xact_date, cx_co_id)
    SELECT o_id, dbt1_choice(100, o_id, ARRAY['VISA','MASTERCARD','DISCOVER','AMEX','DINERS']),
           dbt1_nstring(101, o_id, 16, 16), c_fname || ' ' || c_lname,
           date '2024-01-01' + dbt1_pick(102, o_id, 10, 730)::int, dbt1_astring(103, o_id, 15, 15),
           o_total, o_date, addr_co_id
    FROM orders JOIN customer ON c_id = o_c_id JOIN address ON addr_id = o_ship_addr_id;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;
