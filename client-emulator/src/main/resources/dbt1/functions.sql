-- The 14 DBT-1 (TPC-W) interactions, one PL/pgSQL function each, called as one request
-- SELECT * FROM fn(...) in autocommit.
--
-- Determinism: under symmetric execution every site runs the same call on the same state in the
-- same lock order, so each body is a pure function of its arguments and the database:
--  * no clock, no random(), no sequences: times arrive as the argument p_now (the caller writes
--    now() in the call text, which the middleware fixes to the origin's time); new ids are
--    max(id) + 1, safe because the table is write-locked by the middleware for the whole call;
--  * every ORDER BY that decides which rows are kept or written ends with a unique key;
--  * dates are taken from instants in UTC and instants move by hours, never by days, so the
--    session's TimeZone cannot change a stored value;
--  * text is ordered COLLATE "C", so sites with different default collations agree;
--  * loops over several rows run in a defined order (array order, or ORDER BY a key).
--
-- Table sets: each function touches only the tables Interaction.java declares for it
-- (Dbt1DatabaseTest checks this against pg_locks); helpers count in the sets of their callers.

-- ---------------------------------------------------------------- helpers

-- The related items of p_i_id in their order: the "promotional" thumbnails of several pages.
-- Reads item.
CREATE OR REPLACE FUNCTION dbt1_promotions(p_i_id int)
RETURNS TABLE (pos int, i_id int, i_thumbnail varchar)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT r.pos::int, i.i_id, i.i_thumbnail
    FROM item s
    CROSS JOIN LATERAL unnest(ARRAY[s.i_related1, s.i_related2, s.i_related3, s.i_related4, s.i_related5])
        WITH ORDINALITY AS r(id, pos)
    JOIN item i ON i.i_id = r.id
    WHERE s.i_id = p_i_id
    ORDER BY r.pos;
END $$;

-- A LIKE pattern matching strings that start with p_prefix taken literally.
CREATE OR REPLACE FUNCTION dbt1_prefix_pattern(p_prefix text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT replace(replace(replace(p_prefix, '\', '\\'), '%', '\%'), '_', '\_') || '%'
$$;

-- Adds one unit of p_i_id to the cart at the item's current price. Reads item, writes shopping_cart_line.
CREATE OR REPLACE FUNCTION dbt1_add_to_cart(p_sc_id bigint, p_i_id int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO shopping_cart_line (scl_sc_id, scl_i_id, scl_qty, scl_cost, scl_srp, scl_title, scl_backing)
    SELECT p_sc_id, i.i_id, 1, i.i_cost, i.i_srp, i.i_title, i.i_backing FROM item i WHERE i.i_id = p_i_id
    ON CONFLICT (scl_sc_id, scl_i_id) DO UPDATE SET scl_qty = shopping_cart_line.scl_qty + 1;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'dbt1: no item %', p_i_id USING ERRCODE = 'no_data_found';
    END IF;
END $$;

-- The id of the address with exactly these fields (the lowest, if several), else of a new one.
-- Reads country, address; writes address when it is new.
CREATE OR REPLACE FUNCTION dbt1_find_or_add_address(p_street1 varchar, p_street2 varchar, p_city varchar,
                                                    p_state varchar, p_zip varchar, p_co_id int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    v_id int;
BEGIN
    PERFORM 1 FROM country WHERE co_id = p_co_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'dbt1: no country %', p_co_id USING ERRCODE = 'no_data_found';
    END IF;
    SELECT a.addr_id INTO v_id FROM address a
    WHERE a.addr_street1 = p_street1 AND a.addr_street2 = p_street2 AND a.addr_city = p_city
      AND a.addr_state = p_state AND a.addr_zip = p_zip AND a.addr_co_id = p_co_id
    ORDER BY a.addr_id LIMIT 1;
    IF NOT FOUND THEN
        SELECT coalesce(max(a.addr_id), 0) + 1 INTO v_id FROM address a;
        INSERT INTO address (addr_id, addr_street1, addr_street2, addr_city, addr_state, addr_zip, addr_co_id)
        VALUES (v_id, p_street1, p_street2, p_city, p_state, p_zip, p_co_id);
    END IF;
    RETURN v_id;
END $$;

-- The lines of a cart with its totals, in item order. Reads shopping_cart, shopping_cart_line.
CREATE OR REPLACE FUNCTION dbt1_cart_lines(p_sc_id bigint)
RETURNS TABLE (scl_i_id int, scl_title varchar, scl_cost numeric, scl_srp numeric, scl_backing varchar, scl_qty int,
               sc_sub_total numeric, sc_tax numeric, sc_ship_cost numeric, sc_total numeric)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT l.scl_i_id, l.scl_title, l.scl_cost, l.scl_srp, l.scl_backing, l.scl_qty,
           c.sc_sub_total, c.sc_tax, c.sc_ship_cost, c.sc_total
    FROM shopping_cart c JOIN shopping_cart_line l ON l.scl_sc_id = c.sc_id
    WHERE c.sc_id = p_sc_id
    ORDER BY l.scl_i_id;
END $$;

-- ---------------------------------------------------------------- browsing

-- Home: the customer's name (none for an unknown customer) and five promotional items.
CREATE OR REPLACE FUNCTION home(p_c_id int, p_i_id int)
RETURNS TABLE (c_fname varchar, c_lname varchar, promo_i_id int, promo_thumbnail varchar)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT c.c_fname, c.c_lname, p.i_id, p.i_thumbnail
    FROM dbt1_promotions(p_i_id) p LEFT JOIN customer c ON c.c_id = p_c_id
    ORDER BY p.pos;
END $$;

-- New products: the 50 most recently published items of a subject.
CREATE OR REPLACE FUNCTION new_products(p_subject varchar)
RETURNS TABLE (i_id int, i_title varchar, a_fname varchar, a_lname varchar, i_pub_date date)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT i.i_id, i.i_title, a.a_fname, a.a_lname, i.i_pub_date
    FROM item i JOIN author a ON a.a_id = i.i_a_id
    WHERE i.i_subject = p_subject
    ORDER BY i.i_pub_date DESC, i.i_title COLLATE "C", i.i_id
    LIMIT 50;
END $$;

-- Best sellers: the 50 items of a subject sold in the largest quantities in the latest 3333 orders.
CREATE OR REPLACE FUNCTION best_sellers(p_subject varchar)
RETURNS TABLE (i_id int, i_title varchar, a_fname varchar, a_lname varchar, sold bigint)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    v_from int;
BEGIN
    SELECT max(o.o_id) - 3333 INTO v_from FROM orders o;
    RETURN QUERY
    SELECT i.i_id, i.i_title, a.a_fname, a.a_lname, s.sold
    FROM (SELECT ol.ol_i_id, sum(ol.ol_qty) AS sold FROM order_line ol WHERE ol.ol_o_id > v_from GROUP BY ol.ol_i_id) s
    JOIN item i ON i.i_id = s.ol_i_id
    JOIN author a ON a.a_id = i.i_a_id
    WHERE i.i_subject = p_subject
    ORDER BY s.sold DESC, i.i_id
    LIMIT 50;
END $$;

-- Product detail: one item with its author.
CREATE OR REPLACE FUNCTION product_detail(p_i_id int)
RETURNS TABLE (i_id int, i_title varchar, a_fname varchar, a_lname varchar, i_pub_date date, i_publisher varchar,
               i_subject varchar, i_desc varchar, i_image varchar, i_cost numeric, i_srp numeric, i_avail date,
               i_isbn char, i_page int, i_backing varchar, i_dimensions varchar)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT i.i_id, i.i_title, a.a_fname, a.a_lname, i.i_pub_date, i.i_publisher, i.i_subject, i.i_desc, i.i_image,
           i.i_cost, i.i_srp, i.i_avail, i.i_isbn, i.i_page, i.i_backing, i.i_dimensions
    FROM item i JOIN author a ON a.a_id = i.i_a_id
    WHERE i.i_id = p_i_id;
END $$;

-- Search request: the search form, with promotional items.
CREATE OR REPLACE FUNCTION search_request(p_i_id int)
RETURNS TABLE (pos int, i_id int, i_thumbnail varchar)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT p.pos, p.i_id, p.i_thumbnail FROM dbt1_promotions(p_i_id) p ORDER BY p.pos;
END $$;

-- Search results: up to 50 items whose author's last name or title starts with p_term, or whose
-- subject is p_term, by title.
CREATE OR REPLACE FUNCTION search_results(p_kind varchar, p_term varchar)
RETURNS TABLE (i_id int, i_title varchar, a_fname varchar, a_lname varchar)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    IF p_kind = 'author' THEN
        RETURN QUERY
        SELECT i.i_id, i.i_title, a.a_fname, a.a_lname
        FROM author a JOIN item i ON i.i_a_id = a.a_id
        WHERE a.a_lname LIKE dbt1_prefix_pattern(p_term)
        ORDER BY i.i_title COLLATE "C", i.i_id LIMIT 50;
    ELSIF p_kind = 'title' THEN
        RETURN QUERY
        SELECT i.i_id, i.i_title, a.a_fname, a.a_lname
        FROM item i JOIN author a ON a.a_id = i.i_a_id
        WHERE i.i_title LIKE dbt1_prefix_pattern(p_term)
        ORDER BY i.i_title COLLATE "C", i.i_id LIMIT 50;
    ELSIF p_kind = 'subject' THEN
        RETURN QUERY
        SELECT i.i_id, i.i_title, a.a_fname, a.a_lname
        FROM item i JOIN author a ON a.a_id = i.i_a_id
        WHERE i.i_subject = p_term
        ORDER BY i.i_title COLLATE "C", i.i_id LIMIT 50;
    ELSE
        RAISE EXCEPTION 'dbt1: unknown search kind %', p_kind USING ERRCODE = 'invalid_parameter_value';
    END IF;
END $$;

-- ---------------------------------------------------------------- ordering

-- Shopping cart: creates the cart p_sc_id if new, applies the refreshed quantities (in array order;
-- 0 removes a line), adds one unit of p_i_id when p_add or when the cart would be empty (TPC-W),
-- and returns the cart. Reads item; writes shopping_cart, shopping_cart_line.
CREATE OR REPLACE FUNCTION shopping_cart(p_sc_id bigint, p_add boolean, p_i_id int, p_refresh_i_ids int[],
                                         p_refresh_qtys int[], p_now timestamptz)
RETURNS TABLE (scl_i_id int, scl_title varchar, scl_cost numeric, scl_srp numeric, scl_backing varchar, scl_qty int,
               sc_sub_total numeric, sc_tax numeric, sc_ship_cost numeric, sc_total numeric)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
BEGIN
    INSERT INTO shopping_cart (sc_id, sc_date) VALUES (p_sc_id, p_now) ON CONFLICT (sc_id) DO NOTHING;
    FOR k IN 1 .. coalesce(cardinality(p_refresh_i_ids), 0) LOOP
        IF p_refresh_qtys[k] > 0 THEN
            UPDATE shopping_cart_line l SET scl_qty = p_refresh_qtys[k]
            WHERE l.scl_sc_id = p_sc_id AND l.scl_i_id = p_refresh_i_ids[k];
        ELSE
            DELETE FROM shopping_cart_line l WHERE l.scl_sc_id = p_sc_id AND l.scl_i_id = p_refresh_i_ids[k];
        END IF;
    END LOOP;
    IF p_add OR NOT EXISTS (SELECT 1 FROM shopping_cart_line l WHERE l.scl_sc_id = p_sc_id) THEN
        PERFORM dbt1_add_to_cart(p_sc_id, p_i_id);
    END IF;
    UPDATE shopping_cart c
    SET sc_date = p_now,
        sc_sub_total = (SELECT sum(l.scl_cost * l.scl_qty) FROM shopping_cart_line l WHERE l.scl_sc_id = p_sc_id)
    WHERE c.sc_id = p_sc_id;
    RETURN QUERY SELECT * FROM dbt1_cart_lines(p_sc_id);
END $$;

-- Customer registration: the registration form. DBT-1 reads no table here; the form is filled in
-- from the customer number a returning customer types (user name and password follow from it),
-- and is empty for a new customer (p_c_id null).
CREATE OR REPLACE FUNCTION customer_registration(p_c_id int)
RETURNS TABLE (c_uname varchar, c_passwd varchar)
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF p_c_id IS NULL THEN
        RETURN QUERY SELECT NULL::varchar, NULL::varchar;
    ELSE
        RETURN QUERY SELECT digsyl(p_c_id)::varchar, lower(digsyl(p_c_id))::varchar;
    END IF;
END $$;

-- Buy request: a returning customer (p_c_id) logs in, renewing the session (c_login, c_expiration);
-- a new customer (p_c_id null) is registered with the given fields, at a new or existing address.
-- The cart is created if new and gets p_i_id if empty; its lines take the items' current prices
-- and it gets the customer and the totals: subtotal less the customer's discount, 8.25% tax,
-- shipping 3.00 + 1.00 per unit (TPC-W). Reads item, country; writes customer, address,
-- shopping_cart, shopping_cart_line.
CREATE OR REPLACE FUNCTION buy_request(p_sc_id bigint, p_c_id int, p_i_id int,
                                       p_fname varchar, p_lname varchar, p_street1 varchar, p_street2 varchar,
                                       p_city varchar, p_state varchar, p_zip varchar, p_co_id int,
                                       p_phone varchar, p_email varchar, p_birthdate date, p_data varchar,
                                       p_discount numeric, p_now timestamptz)
RETURNS TABLE (c_id int, c_uname varchar, c_passwd varchar, c_fname varchar, c_lname varchar, c_discount numeric,
               addr_street1 varchar, addr_street2 varchar, addr_city varchar, addr_state varchar, addr_zip varchar,
               co_name varchar, scl_i_id int, scl_title varchar, scl_cost numeric, scl_srp numeric, scl_backing varchar,
               scl_qty int, sc_sub_total numeric, sc_tax numeric, sc_ship_cost numeric, sc_total numeric)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_c_id int;
    v_addr int;
    v_fname varchar;
    v_lname varchar;
    v_discount numeric;
    v_gross numeric;
    v_units bigint;
    v_sub numeric;
    v_tax numeric;
    v_ship numeric;
BEGIN
    IF p_c_id IS NULL THEN
        v_addr := dbt1_find_or_add_address(p_street1, p_street2, p_city, p_state, p_zip, p_co_id);
        SELECT coalesce(max(c.c_id), 0) + 1 INTO v_c_id FROM customer c;
        INSERT INTO customer (c_id, c_uname, c_passwd, c_fname, c_lname, c_addr_id, c_phone, c_email, c_since,
                              c_last_visit, c_login, c_expiration, c_discount, c_balance, c_ytd_pmt, c_birthdate, c_data)
        VALUES (v_c_id, digsyl(v_c_id), lower(digsyl(v_c_id)), p_fname, p_lname, v_addr, p_phone, p_email,
                (p_now AT TIME ZONE 'UTC')::date, (p_now AT TIME ZONE 'UTC')::date, p_now, p_now + interval '2 hours',
                p_discount, 0, 0, p_birthdate, p_data);
    ELSE
        v_c_id := p_c_id;
        UPDATE customer c SET c_login = p_now, c_expiration = p_now + interval '2 hours' WHERE c.c_id = v_c_id;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'dbt1: no customer %', v_c_id USING ERRCODE = 'no_data_found';
        END IF;
    END IF;
    SELECT c.c_fname, c.c_lname, c.c_discount INTO v_fname, v_lname, v_discount FROM customer c WHERE c.c_id = v_c_id;

    INSERT INTO shopping_cart (sc_id, sc_date) VALUES (p_sc_id, p_now) ON CONFLICT (sc_id) DO NOTHING;
    IF NOT EXISTS (SELECT 1 FROM shopping_cart_line l WHERE l.scl_sc_id = p_sc_id) THEN
        PERFORM dbt1_add_to_cart(p_sc_id, p_i_id);
    END IF;
    UPDATE shopping_cart_line l
    SET scl_cost = i.i_cost, scl_srp = i.i_srp, scl_title = i.i_title, scl_backing = i.i_backing
    FROM item i
    WHERE l.scl_sc_id = p_sc_id AND i.i_id = l.scl_i_id;
    SELECT sum(l.scl_cost * l.scl_qty), sum(l.scl_qty) INTO v_gross, v_units
    FROM shopping_cart_line l WHERE l.scl_sc_id = p_sc_id;
    v_sub := round(v_gross * (1 - v_discount), 2);
    v_tax := round(v_sub * 0.0825, 2);
    v_ship := 3.00 + v_units;
    UPDATE shopping_cart c
    SET sc_c_id = v_c_id, sc_c_fname = v_fname, sc_c_lname = v_lname, sc_c_discount = v_discount, sc_date = p_now,
        sc_sub_total = v_sub, sc_tax = v_tax, sc_ship_cost = v_ship, sc_total = v_sub + v_tax + v_ship
    WHERE c.sc_id = p_sc_id;

    RETURN QUERY
    SELECT c.c_id, c.c_uname, c.c_passwd, c.c_fname, c.c_lname, c.c_discount,
           a.addr_street1, a.addr_street2, a.addr_city, a.addr_state, a.addr_zip, co.co_name,
           l.scl_i_id, l.scl_title, l.scl_cost, l.scl_srp, l.scl_backing, l.scl_qty,
           l.sc_sub_total, l.sc_tax, l.sc_ship_cost, l.sc_total
    FROM customer c
    JOIN address a ON a.addr_id = c.c_addr_id
    JOIN country co ON co.co_id = a.addr_co_id
    CROSS JOIN dbt1_cart_lines(p_sc_id) l
    WHERE c.c_id = v_c_id
    ORDER BY l.scl_i_id;
END $$;

-- Buy confirm: orders the cart's contents for the cart's customer (else p_c_id), shipped to the
-- given address (found or added) or, when p_street1 is null, to the customer's. The order gets
-- id max(o_id) + 1, one line per cart line in item order, a credit-card transaction for its total,
-- and each item's stock falls by the quantity (TPC-W: back up by 21 when it would drop below 10).
-- An empty cart orders nothing and returns no row. The cart stays as it is (DBT-1 does not write
-- it here). Reads shopping_cart, shopping_cart_line, customer, country; writes address, orders,
-- order_line, cc_xacts, item.
CREATE OR REPLACE FUNCTION buy_confirm(p_sc_id bigint, p_c_id int, p_cc_type varchar, p_cc_num varchar,
                                       p_cc_name varchar, p_cc_expiry date, p_auth_id varchar, p_ship_type varchar,
                                       p_ship_days int, p_comment varchar, p_street1 varchar, p_street2 varchar,
                                       p_city varchar, p_state varchar, p_zip varchar, p_co_id int, p_now timestamptz)
RETURNS TABLE (o_id int, o_sub_total numeric, o_tax numeric, o_total numeric, o_ship_date timestamptz,
               ol_id int, ol_i_id int, ol_qty int)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_c_id int;
    v_discount numeric;
    v_bill int;
    v_ship_addr int;
    v_co_id int;
    v_gross numeric;
    v_units bigint;
    v_o_id int;
    v_sub numeric;
    v_tax numeric;
    v_total numeric;
BEGIN
    SELECT c.sc_c_id INTO v_c_id FROM shopping_cart c WHERE c.sc_id = p_sc_id;
    v_c_id := coalesce(v_c_id, p_c_id);
    SELECT c.c_discount, c.c_addr_id INTO v_discount, v_bill FROM customer c WHERE c.c_id = v_c_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'dbt1: no customer %', v_c_id USING ERRCODE = 'no_data_found';
    END IF;
    SELECT sum(l.scl_cost * l.scl_qty), sum(l.scl_qty) INTO v_gross, v_units
    FROM shopping_cart_line l WHERE l.scl_sc_id = p_sc_id;
    IF v_units IS NULL THEN
        RETURN;
    END IF;

    IF p_street1 IS NULL THEN
        v_ship_addr := v_bill;
    ELSE
        v_ship_addr := dbt1_find_or_add_address(p_street1, p_street2, p_city, p_state, p_zip, p_co_id);
    END IF;
    SELECT a.addr_co_id INTO v_co_id FROM address a WHERE a.addr_id = v_ship_addr;

    v_sub := round(v_gross * (1 - v_discount), 2);
    v_tax := round(v_sub * 0.0825, 2);
    v_total := v_sub + v_tax + 3.00 + v_units;
    SELECT coalesce(max(o.o_id), 0) + 1 INTO v_o_id FROM orders o;
    INSERT INTO orders (o_id, o_c_id, o_date, o_sub_total, o_tax, o_total, o_ship_type, o_ship_date,
                        o_bill_addr_id, o_ship_addr_id, o_status)
    VALUES (v_o_id, v_c_id, p_now, v_sub, v_tax, v_total, p_ship_type, p_now + p_ship_days * interval '24 hours',
            v_bill, v_ship_addr, 'PENDING');
    INSERT INTO order_line (ol_o_id, ol_id, ol_i_id, ol_qty, ol_discount, ol_comments)
    SELECT v_o_id, (row_number() OVER (ORDER BY l.scl_i_id))::int, l.scl_i_id, l.scl_qty, v_discount, p_comment
    FROM shopping_cart_line l WHERE l.scl_sc_id = p_sc_id;
    UPDATE item i
    SET i_stock = CASE WHEN i.i_stock - l.scl_qty >= 10 THEN i.i_stock - l.scl_qty ELSE i.i_stock - l.scl_qty + 21 END
    FROM shopping_cart_line l
    WHERE l.scl_sc_id = p_sc_id AND i.i_id = l.scl_i_id;
    INSERT INTO cc_xacts (cx_o_id, cx_type, cx_num, cx_name, cx_expiry, cx_auth_id, cx_xact_amt, cx_xact_date, cx_co_id)
    VALUES (v_o_id, p_cc_type, p_cc_num, p_cc_name, p_cc_expiry, p_auth_id, v_total, p_now, v_co_id);

    RETURN QUERY
    SELECT o.o_id, o.o_sub_total, o.o_tax, o.o_total, o.o_ship_date, ol.ol_id, ol.ol_i_id, ol.ol_qty
    FROM orders o JOIN order_line ol ON ol.ol_o_id = o.o_id
    WHERE o.o_id = v_o_id
    ORDER BY ol.ol_id;
END $$;

-- Order inquiry: the login form, filled in with the customer's user name.
CREATE OR REPLACE FUNCTION order_inquiry(p_c_id int)
RETURNS TABLE (c_uname varchar)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY SELECT c.c_uname FROM customer c WHERE c.c_id = p_c_id;
END $$;

-- Order display: the latest order of the customer who logs in with p_uname/p_passwd, its lines,
-- addresses and payment; no row for a wrong password or a customer without orders.
CREATE OR REPLACE FUNCTION order_display(p_uname varchar, p_passwd varchar)
RETURNS TABLE (o_id int, c_fname varchar, c_lname varchar, c_phone varchar, c_email varchar, o_date timestamptz,
               o_sub_total numeric, o_tax numeric, o_total numeric, o_ship_type varchar, o_ship_date timestamptz,
               o_status varchar, bill_street1 varchar, bill_city varchar, bill_country varchar,
               ship_street1 varchar, ship_city varchar, ship_country varchar, cx_type varchar, cx_auth_id char,
               ol_i_id int, i_title varchar, i_publisher varchar, i_cost numeric, ol_qty int, ol_discount numeric,
               ol_comments varchar)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
DECLARE
    v_c_id int;
    v_o_id int;
BEGIN
    SELECT c.c_id INTO v_c_id FROM customer c WHERE c.c_uname = p_uname AND c.c_passwd = p_passwd;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT o.o_id INTO v_o_id FROM orders o WHERE o.o_c_id = v_c_id ORDER BY o.o_date DESC, o.o_id DESC LIMIT 1;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT o.o_id, c.c_fname, c.c_lname, c.c_phone, c.c_email, o.o_date, o.o_sub_total, o.o_tax, o.o_total,
           o.o_ship_type, o.o_ship_date, o.o_status, ba.addr_street1, ba.addr_city, bco.co_name,
           sa.addr_street1, sa.addr_city, sco.co_name, cx.cx_type, cx.cx_auth_id,
           ol.ol_i_id, i.i_title, i.i_publisher, i.i_cost, ol.ol_qty, ol.ol_discount, ol.ol_comments
    FROM orders o
    JOIN customer c ON c.c_id = o.o_c_id
    JOIN address ba ON ba.addr_id = o.o_bill_addr_id JOIN country bco ON bco.co_id = ba.addr_co_id
    JOIN address sa ON sa.addr_id = o.o_ship_addr_id JOIN country sco ON sco.co_id = sa.addr_co_id
    LEFT JOIN cc_xacts cx ON cx.cx_o_id = o.o_id
    JOIN order_line ol ON ol.ol_o_id = o.o_id
    JOIN item i ON i.i_id = ol.ol_i_id
    WHERE o.o_id = v_o_id
    ORDER BY ol.ol_id;
END $$;

-- ---------------------------------------------------------------- administration

-- Admin request: the item to edit, with its author.
CREATE OR REPLACE FUNCTION admin_request(p_i_id int)
RETURNS TABLE (i_id int, i_title varchar, a_fname varchar, a_lname varchar, i_subject varchar, i_desc varchar,
               i_cost numeric, i_srp numeric, i_image varchar, i_thumbnail varchar, i_pub_date date)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT i.i_id, i.i_title, a.a_fname, a.a_lname, i.i_subject, i.i_desc, i.i_cost, i.i_srp, i.i_image,
           i.i_thumbnail, i.i_pub_date
    FROM item i JOIN author a ON a.a_id = i.i_a_id
    WHERE i.i_id = p_i_id;
END $$;

-- Admin confirm: new cost and images, published today (UTC day of p_now), and new related items:
-- the five items bought in the largest quantities by the customers who bought this one in the
-- latest 10000 orders (TPC-W), ties broken by item id; fewer than five keep the old ones.
-- Reads orders, order_line; writes item.
CREATE OR REPLACE FUNCTION admin_confirm(p_i_id int, p_cost numeric, p_image varchar, p_thumbnail varchar,
                                         p_now timestamptz)
RETURNS TABLE (i_id int, i_cost numeric, i_image varchar, i_thumbnail varchar, i_pub_date date,
               i_related1 int, i_related2 int, i_related3 int, i_related4 int, i_related5 int)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_from int;
    v_related int[];
BEGIN
    SELECT max(o.o_id) - 10000 INTO v_from FROM orders o;
    SELECT array_agg(t.id ORDER BY t.qty DESC, t.id) INTO v_related
    FROM (SELECT ol.ol_i_id AS id, sum(ol.ol_qty) AS qty
          FROM orders o JOIN order_line ol ON ol.ol_o_id = o.o_id
          WHERE o.o_c_id IN (SELECT o2.o_c_id FROM orders o2 JOIN order_line ol2 ON ol2.ol_o_id = o2.o_id
                             WHERE o2.o_id > v_from AND ol2.ol_i_id = p_i_id)
            AND ol.ol_i_id <> p_i_id
          GROUP BY ol.ol_i_id
          ORDER BY qty DESC, id
          LIMIT 5) t;
    UPDATE item i
    SET i_cost = p_cost, i_image = p_image, i_thumbnail = p_thumbnail, i_pub_date = (p_now AT TIME ZONE 'UTC')::date,
        i_related1 = coalesce(v_related[1], i.i_related1), i_related2 = coalesce(v_related[2], i.i_related2),
        i_related3 = coalesce(v_related[3], i.i_related3), i_related4 = coalesce(v_related[4], i.i_related4),
        i_related5 = coalesce(v_related[5], i.i_related5)
    WHERE i.i_id = p_i_id;
    RETURN QUERY
    SELECT i.i_id, i.i_cost, i.i_image, i.i_thumbnail, i.i_pub_date,
           i.i_related1, i.i_related2, i.i_related3, i.i_related4, i.i_related5
    FROM item i WHERE i.i_id = p_i_id;
END $$;
