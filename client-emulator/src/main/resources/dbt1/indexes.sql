-- Secondary indexes, built after the load (faster than maintaining them row by row).
-- text_pattern_ops: prefix LIKE searches use the index whatever the database's collation.
CREATE INDEX item_subject ON item (i_subject);
CREATE INDEX item_author ON item (i_a_id);
CREATE INDEX item_title_prefix ON item (i_title text_pattern_ops);
CREATE INDEX author_lname_prefix ON author (a_lname text_pattern_ops);
CREATE UNIQUE INDEX customer_uname ON customer (c_uname);
CREATE INDEX orders_customer ON orders (o_c_id);
CREATE INDEX order_line_item ON order_line (ol_i_id);
CREATE INDEX address_street ON address (addr_street1);
